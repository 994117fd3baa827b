"""Background review, approval, compression and recall, driven in-process through the runner."""

from __future__ import annotations

import json
import threading
import time

import pytest

from agent.chat.runner import AgentSession, TurnSaved
from agent.learning import notify
from agent.learning.providers import FENCE_OPEN
from agent.learning.review import is_running, wait_for_reviews
from agent.loop import TurnDone
from knowledge.models import ChatSession, Message, PendingWrite, ReviewRun
from tests.conftest import write_config
from tests.fakellm import Reply, last_user_text
from tests.learning import SAVE_USER_PREF, is_review_followup, is_review_start, review_starts, script_review

pytestmark = pytest.mark.django_db(transaction=True)


def _turn(agent: AgentSession, text: str) -> list:
    return list(agent.run_turn(text))


def _answer(events) -> str:
    return next(e.final_text for e in events if isinstance(e, TurnDone))


def _every_turn_reviews(home):
    # About the review's mechanics, with turns that state nothing: the evidence rule is tested in
    # tests/agent/admission/test_provenance.py.
    write_config(
        home, "learning:\n  evidence: off\nmemory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\n"
    )


def test_failing_review_is_recorded_and_chat_goes_on(home, llm):
    _every_turn_reviews(home)
    llm.default = lambda b: Reply(text=f"answer to {last_user_text(b)}")
    llm.when(is_review_start, Reply(status=500, error_message="review model broke"))
    agent = AgentSession.open(source="cli")
    assert _answer(_turn(agent, "first")) == "answer to first"
    assert wait_for_reviews(agent.session.pk, 30)
    run = ReviewRun.objects.get(session=agent.session)
    assert run.status == "failed" and "HTTP 500" in run.error
    assert _answer(_turn(agent, "second")) == "answer to second"


@pytest.mark.slow
def test_slow_review_does_not_delay_the_next_answer(home, llm):
    _every_turn_reviews(home)
    llm.default = lambda b: Reply(text="quick answer")
    script_review(llm, [SAVE_USER_PREF], delay=3)
    agent = AgentSession.open(source="cli")
    events = _turn(agent, "one")
    assert any(isinstance(e, TurnSaved) and e.review_spawned for e in events)
    # The review is still sleeping in the model server while the next turn is answered.
    assert _answer(_turn(agent, "two")) == "quick answer"
    assert is_running(agent.session.pk)
    assert wait_for_reviews(agent.session.pk, 30)
    assert "Prefers Debian" in (home / "memories" / "USER.md").read_text()


def test_review_tool_outside_its_four_is_refused(home, llm):
    _every_turn_reviews(home)
    script_review(llm, [{"name": "session_search", "arguments": {"query": "secrets"}}, SAVE_USER_PREF])
    agent = AgentSession.open(source="cli")
    _turn(agent, "hello")
    assert wait_for_reviews(agent.session.pk, 30)
    followup = [b for b in llm.chat_requests() if is_review_followup(b)][0]
    results = [json.loads(m["content"]) for m in followup["messages"] if m["role"] == "tool"]
    assert results[0]["success"] is False and "not available" in results[0]["error"]
    assert results[1]["success"] is True
    run = ReviewRun.objects.get(session=agent.session)
    assert run.summary == "User profile updated"


def test_one_review_per_session_at_a_time(home, llm):
    spans: list[tuple[str, float]] = []

    def start(body):
        spans.append(("start", time.monotonic()))
        return Reply(tool_calls=[SAVE_USER_PREF], delay=1.0)

    def follow(body):
        spans.append(("end", time.monotonic()))
        return Reply(text="ok")

    llm.when(is_review_start, start)
    llm.when(is_review_followup, follow)
    agent = AgentSession.open(source="cli")
    snapshot = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "I like tea"},
        {"role": "assistant", "content": "noted"},
    ]
    f1 = agent.spawn_review(True, False, snapshot)
    f2 = agent.spawn_review(True, False, snapshot)
    f1.result(30)
    f2.result(30)
    # Both ran (none dropped) and never overlapped: start, end, start, end.
    assert [k for k, _ in spans] == ["start", "end", "start", "end"]
    assert ReviewRun.objects.filter(session=agent.session, status="done").count() == 2


def test_review_notice_reaches_listeners_with_summary(home, llm):
    _every_turn_reviews(home)
    script_review(
        llm,
        [
            SAVE_USER_PREF,
            {"name": "memory", "arguments": {"target": "user", "action": "add", "content": "Uses ports 3000-3010"}},
        ],
    )
    heard: list[notify.ReviewNotice] = []
    got = threading.Event()

    def listener(n: notify.ReviewNotice) -> None:
        heard.append(n)
        got.set()

    unsubscribe = notify.subscribe(listener)
    try:
        agent = AgentSession.open(source="cli")
        _turn(agent, "hi")
        assert got.wait(30)
    finally:
        unsubscribe()
    # Two writes are two saved; to one file, the summary names it once.
    assert heard[0].line == "💾 2 saved" and heard[0].summary == "User profile updated"


def test_write_approval_stages_review_writes_until_approved(home, llm):
    write_config(home, "memory:\n  nudge_interval: 1\n  write_approval: true\nskills:\n  creation_nudge_interval: 0\n")
    script_review(llm, [SAVE_USER_PREF])
    agent = AgentSession.open(source="cli")
    _turn(agent, "hi")
    assert wait_for_reviews(agent.session.pk, 30)
    user_md = home / "memories" / "USER.md"
    assert not user_md.exists() or "Prefers Debian" not in user_md.read_text()
    pending = PendingWrite.objects.get(status="pending")
    assert pending.arguments["content"] == "Prefers Debian base images"
    from agent.tools.memory_tool import apply_pending
    from knowledge.provenance import Provenance

    result = json.loads(apply_pending(pending, Provenance(actor="user")).content())
    assert result["success"] is True
    assert "Prefers Debian base images" in user_md.read_text()


def test_compression_keeps_the_conversation_going(home, llm):
    write_config(
        home,
        "model:\n  context_window: 3000\nmemory:\n  nudge_interval: 0\n  flush_min_turns: 2\n"
        "skills:\n  creation_nudge_interval: 0\n",
    )
    llm.default = lambda b: Reply(text="noted " + "x" * 400, prompt_tokens=None)
    llm.when(
        lambda b: b["messages"][0]["content"].startswith("Summarise the conversation"),
        Reply(text="SUMMARY: user talked about gardens"),
    )
    llm.when(
        lambda b: any(
            m.get("content", "").startswith("[System: The session is being compressed")
            for m in b["messages"]
            if m["role"] == "user"
        ),
        Reply(
            tool_calls=[
                {
                    "name": "memory",
                    "arguments": {
                        "target": "memory",
                        "action": "add",
                        "content": "User grows tomatoes",
                        "evidence": ["I grow tomatoes in my garden"],
                    },
                }
            ]
        ),
    )
    agent = AgentSession.open(source="cli")
    first_prompt = agent.session.system_prompt
    for i in range(12):
        events = _turn(agent, f"message {i} about my garden: I grow tomatoes in my garden " + "y" * 300)
        assert _answer(events).startswith("noted")
    session = ChatSession.objects.get(pk=agent.session.pk)
    assert session.compression_count >= 1
    last = llm.chat_requests()[-1]
    contents = [m.get("content") or "" for m in last["messages"]]
    assert any("SUMMARY: user talked about gardens" in c for c in contents)
    assert "message 0 about" in contents[1]  # the head is protected
    assert "message 11 about" in contents[-1]
    # The system prompt was rebuilt once, so the memory saved by the flush shows up.
    assert last["messages"][0]["content"] != first_prompt and "User grows tomatoes" in last["messages"][0]["content"]
    # The stored history keeps every message.
    assert Message.objects.filter(session=session, role="user").count() == 12
    # A resumed session continues from the compressed context.
    resumed = AgentSession.open(session_id=session.pk)
    assert any("SUMMARY" in (m.get("content") or "") for m in resumed.messages)


def test_recall_provider_offers_past_session_excerpt(home, llm):
    write_config(
        home, "memory:\n  provider: session_recall\n  nudge_interval: 0\nskills:\n  creation_nudge_interval: 0\n"
    )
    llm.default = lambda b: Reply(text="ok")
    old = AgentSession.open(source="cli")
    _turn(old, "My kubernetes ingress certificates keep expiring every Tuesday")
    new = AgentSession.open(source="cli")
    _turn(new, "Back to the kubernetes ingress problem")
    sent = llm.chat_requests()[-1]["messages"][-1]["content"]
    assert FENCE_OPEN in sent and "expiring" in sent
    assert sent.endswith("Back to the kubernetes ingress problem")
    stored = Message.objects.filter(session=new.session, role="user").get()
    assert stored.content == "Back to the kubernetes ingress problem"


def test_interrupted_turn_spawns_no_review(home, llm):
    _every_turn_reviews(home)
    llm.default = lambda b: Reply(text="long " * 300, chunk_delay=0.01)
    script_review(llm, [SAVE_USER_PREF])
    agent = AgentSession.open(source="cli")
    stop = threading.Event()
    for _ev in agent.run_turn("talk", stop):
        stop.set()
    assert review_starts(llm) == []
