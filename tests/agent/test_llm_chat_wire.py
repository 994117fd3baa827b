"""The recorded shapes of real servers (tests/wire/) through `manage.py chat`, as a person runs it."""

from __future__ import annotations

import pytest

from tests import dbs
from tests.cli import CLIHome, new_home
from tests.wire import ANSWER_CASES, ERROR_CASES, REFUSAL_CASES, TEMPLATE_THINK_CASES, TOOL_CASES, WireCase
from tests.wire.gemini import SIGNATURE
from tests.wire.replay import FOLLOW_UP, replay, uses
from tests.wire.thinking_templates import CLAUDE_SIGNATURE, CLAUDE_THOUGHT

pytestmark = pytest.mark.slow

MARKUP = ("<tool_call>", "<function=", "<parameter", "<|", "<｜", "[TOOL_CALLS]", "<think>", "</think>")


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> CLIHome:
    """One migrated home for the module; each case talks to its own model name, so the
    capabilities one case teaches are not another's. The recorded calls save made-up markers
    ("ollama-parallel-alpha") that no message supports: the evidence rule, tested elsewhere, is
    off here so that what is tested is the wire."""
    h = new_home(tmp_path_factory.mktemp("wire"))
    (h.path / "config.yaml").write_text("model:\n  max_retries: 0\n  timeout: 10\nlearning:\n  evidence: 'off'\n")
    return h


def _chat(home: CLIHome, server, case: WireCase, *texts: str):
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "HERMES_MODEL": case.name}
    args = [a for t in texts for a in ("-m", t)]
    return home.manage("chat", "--review-wait", "5", *args, env=env)


def _memory(home: CLIHome) -> str:
    path = home.path / "memories" / "MEMORY.md"
    return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.mark.parametrize("case", TOOL_CASES, ids=str)
def test_tool_shape_saves_the_memory_entry_it_asked_for(home, server, case):
    replay(server, case)
    r = _chat(home, server, case, "please remember this")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "error:" not in r.stderr
    entries = [e.strip() for e in _memory(home).split("\n§\n")]
    for content in case.saves:
        assert content in entries, (content, entries, r.stderr)
    assert FOLLOW_UP in r.stdout
    assert not [m for m in MARKUP if m in r.stdout], r.stdout
    assert "could not be read" not in r.stderr
    if case.reasoning:
        assert case.reasoning.strip() not in r.stdout


@pytest.mark.parametrize("case", ANSWER_CASES, ids=str)
def test_answer_shape_prints_the_answer_without_the_thinking(home, server, case):
    replay(server, case)
    r = _chat(home, server, case, "hello")
    assert r.returncode == 0, r.stderr
    assert case.answer in r.stdout and "Traceback" not in r.stderr
    if case.reasoning:
        assert case.reasoning not in r.stdout
        stored = dbs.query(
            home.path,
            "select reasoning from knowledge_message where role='assistant' and content=? order by id desc",
            case.answer,
        )
        assert stored[0] == (case.reasoning,)


@pytest.mark.parametrize("case", ERROR_CASES, ids=str)
def test_error_shape_is_one_readable_line_and_exit_status_1(home, server, case):
    replay(server, case)
    r = _chat(home, server, case, "hello")
    assert r.returncode == 1
    errors = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and errors[0].startswith("error:") and case.error in errors[0], r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("case", [c for c in REFUSAL_CASES if c.refuses in ("tools", "stream_tools",
                                  "system_role", "stream_options")], ids=str)  # fmt: skip
def test_refusing_server_works_and_is_not_asked_again_in_the_next_run(home, server, case):
    replay(server, case)
    first = _chat(home, server, case, "one")
    assert first.returncode == 0, first.stderr
    assert "Traceback" not in first.stderr and "error:" not in first.stderr
    used = uses(case.refuses)
    assert [used(b) for b in server.chat_requests()] == [True, False]
    second = _chat(home, server, case, "two")  # a new process: the finding was stored
    assert second.returncode == 0, second.stderr
    assert len(server.chat_requests()) == 3 and not used(server.chat_requests()[-1])
    assert ("note:" in first.stderr) == (case.refuses == "tools") and "note:" not in second.stderr


def test_reasoning_content_goes_back_on_the_next_request_of_a_resumed_session(home, server):
    case = next(c for c in TOOL_CASES if c.name == "deepseek_thinking_then_tool_call")
    replay(server, case)
    env_case = WireCase("deepseek-resume", case.server, case.source, 3, case.raw, True)
    r = home.manage("chat", "--session", "ds", "-m", "remember", env={
        "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "HERMES_MODEL": env_case.name})  # fmt: skip
    assert r.returncode == 0, r.stderr
    r2 = home.manage("chat", "--session", "ds", "-m", "next", env={
        "OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "HERMES_MODEL": env_case.name})  # fmt: skip
    assert r2.returncode == 0, r2.stderr
    resumed = server.chat_requests()[-1]["messages"]
    thinking = [m.get("reasoning_content") for m in resumed if m["role"] == "assistant" and m.get("tool_calls")]
    assert thinking == [case.reasoning]


def test_a_call_that_cannot_be_read_is_said_in_the_turn(home, server):
    from tests.wire import chunk, sse

    raw = sse(chunk({"tool_calls": [{"index": 0, "id": "c1", "type": "function",
              "function": {"name": "memory", "arguments": '{"target": "memory", "content": "cut'}}]}),
              chunk({}, "tool_calls"))  # fmt: skip
    case = WireCase("unreadable-args", "synthetic", "-", 12, raw, stream=True)
    replay(server, case)
    r = _chat(home, server, case, "please remember this")
    assert r.returncode == 0, r.stderr
    assert "note: The model's call to memory could not be read — nothing was saved." in r.stderr


@pytest.mark.parametrize("case", TEMPLATE_THINK_CASES, ids=str)
def test_a_template_that_opens_the_think_block_is_learned_from_its_first_reply(home, server, case):
    replay(server, case)
    first = _chat(home, server, case, "hello")
    assert first.returncode == 0, first.stderr
    # The first reply's thinking streamed before its close showed what it was: the person is told,
    # the tag itself is never shown, and the stored answer and thinking are put right.
    assert "note: The start of that reply was the model's thinking" in first.stderr
    assert case.answer in first.stdout and "</think>" not in first.stdout
    stored = dbs.query(
        home.path, "select content, reasoning from knowledge_message where role='assistant' order by id desc"
    )
    assert stored[0] == (case.answer, case.reasoning)
    replay(server, case)
    second = _chat(home, server, case, "hello again")  # a new process: what was learned is stored
    assert second.returncode == 0, second.stderr
    assert case.answer in second.stdout and case.reasoning.strip() not in second.stdout
    assert "note:" not in second.stderr


def _gemini_signature(message: dict) -> object:
    return message["tool_calls"][0]["extra_content"]["google"]["thought_signature"]


def _signed_thinking(message: dict) -> object:
    return (message["reasoning_details"][0]["text"], message["reasoning_details"][0]["signature"])


@pytest.mark.parametrize(
    ("case_name", "sent_back", "expected"),
    [
        ("gemini3_signed_calls_without_index", _gemini_signature, SIGNATURE),
        ("openrouter_claude_signed_reasoning_details", _signed_thinking, (CLAUDE_THOUGHT, CLAUDE_SIGNATURE)),
    ],
)  # fmt: skip
def test_what_a_server_put_on_its_reply_goes_back_in_a_resumed_session(home, server, case_name, sent_back, expected):
    """Stored with the message and sent back by a new process reading the history from the database."""
    case = next(c for c in TOOL_CASES if c.name == case_name)
    replay(server, case)
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k", "HERMES_MODEL": f"{case_name}-resume"}
    first = home.manage("chat", "--session", case_name, "-m", "remember", env=env)
    assert first.returncode == 0 and FOLLOW_UP in first.stdout, first.stderr
    second = home.manage("chat", "--session", case_name, "-m", "next", env=env)
    assert second.returncode == 0 and FOLLOW_UP in second.stdout, second.stderr
    resumed = server.chat_requests()[-1]["messages"]
    answered = [m for m in resumed if m["role"] == "assistant" and m.get("tool_calls")]
    assert sent_back(answered[0]) == expected
