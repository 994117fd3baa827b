"""A private chat through the real chat path (daphne, the chat websocket, the scripted model server):
twelve turns — past both review intervals, past the compression threshold — then New chat, which
ends it. Nothing of it is learned: no review (no ReviewRun, no review request), no memory flush
(before compression or at its end), no memory provider call (the shipped `session_recall`,
registered again to record its calls: tests/agent/learning/recording_asgi.py), and its words are
found neither by the search page nor by the agent's session_search. An ordinary chat with the same
script, on the same server, does each of these."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_site import websocket_server
from tests.chat_socket import say
from tests.cli import wait_until
from tests.daphne import Daphne, Http, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text
from tests.learning import is_flush, is_review_start

pytestmark = pytest.mark.slow

# Reviews every 10 turns and 10 model calls (the defaults), a flush from the 2nd turn, and a
# context small enough that twelve turns of these messages are compressed.
CONFIG = """memory:
  provider: session_recall
  flush_min_turns: 2
model:
  context_window: 2000
compression:
  threshold: 0.5
"""
TURNS = 12
FILLER = "We go over the enclosure, the feeding times and the night-time routine once more, in detail. " * 3
SECRET, OPEN = "pangolin", "capybara"  # words no other test writes
CALLS_FILE = "provider-calls.jsonl"  # in the server's home, written by recording_asgi (not imported: it serves)


def _turns(word: str) -> list[str]:
    return [f"Turn {i} about my {word}: {FILLER}" for i in range(1, TURNS + 1)]


_SERVE = websocket_server.command


def _recording_command(host: str, port: int, *, quiet: bool = False) -> list[str]:
    """The dashboard's own command line, serving the application with the recording provider."""
    return [*_SERVE(host, port, quiet=quiet)[:-1], "tests.agent.learning.recording_asgi:application"]


def _asks_to_recall(word: str) -> Callable[[dict[str, Any]], bool]:
    # The question may come after what session_recall recalled for it (<memory-context>).
    return lambda body: body["messages"][-1]["role"] == "user" and last_user_text(body).endswith(f"recall {word}")


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM()
    server.default = lambda body: Reply(text=f"answer to {last_user_text(body)[:40]}")
    server.when(is_review_start, Reply(text="Nothing to save."))
    for word in (SECRET, OPEN):  # the agent of a third chat looks each word up
        server.when(_asks_to_recall(word), Reply(tool_calls=[{"name": "session_search", "arguments": {"query": word}}]))
    server.start()
    yield server
    server.stop()


@pytest.fixture
def dashboard(tmp_path: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> Iterator[Daphne]:
    monkeypatch.setattr(websocket_server, "command", _recording_command)
    with start_daphne(tmp_path / "home", config=CONFIG, extra_env=model_env(llm.base_url)) as server:
        yield server


def _requests_about(llm: ScriptedLLM, word: str) -> list[dict[str, Any]]:
    return [b for b in llm.chat_requests() if word in json.dumps(b["messages"])]


def _provider_calls(server: Daphne, session_id: str) -> set[str]:
    path = server.home / CALLS_FILE
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return {call["call"] for call in map(json.loads, lines) if call["session"] == session_id}


def _one(server: Daphne, sql: str, *args: Any) -> Any:
    return server.query(sql, *args)[0][0]


def _end_with_new_chat(server: Daphne, client: Http, session_id: str) -> str:
    """New chat from this one: it is ended in the background; the new chat's id."""
    resp = client.csrf_post("/c/new/", {"from": session_id})
    assert resp.status == 302, resp
    wait_until(
        lambda: _one(server, "SELECT ended_at FROM knowledge_chatsession WHERE id = ?", session_id) is not None,
        "the chat to be ended",
    )
    return resp.location.strip("/").split("/")[-1]


def _session_search_result(server: Daphne, session_id: str, word: str) -> dict[str, Any]:
    for (content,) in server.query(
        "SELECT content FROM knowledge_message WHERE session_id = ? AND role = 'tool' ORDER BY id", session_id
    ):
        result = json.loads(content)
        if result.get("query") == word:
            return dict(result)
    raise AssertionError(f"no session_search result for {word!r}")


def test_a_private_chat_is_not_learned_from_nor_found_and_an_ordinary_one_is(
    dashboard: Daphne, llm: ScriptedLLM
) -> None:
    server = dashboard
    client = Http(server.port)
    client.login(server.token)
    assert client.get("/").status == 200
    (first,) = server.query("SELECT id FROM knowledge_chatsession")
    # "New private chat" from the unused chat the home page opened: that chat becomes private.
    made = client.csrf_post("/c/new/private/", {"from": first[0]})
    secret = first[0]
    assert made.status == 302 and made.location == f"/c/{secret}/"
    assert 'class="badge private-mark"' in client.get(f"/c/{secret}/").body

    say(server, client, secret, *_turns(SECRET))
    ordinary = _end_with_new_chat(server, client, secret)
    say(server, client, ordinary, *_turns(OPEN))
    third = _end_with_new_chat(server, client, ordinary)
    wait_until(
        lambda: _one(server, "SELECT count(*) FROM knowledge_reviewrun WHERE status NOT IN ('done', 'failed')") == 0,
        "the reviews to finish",
    )

    # Both chats ran twelve turns and were compressed; only the ordinary one was learned from.
    for chat in (secret, ordinary):
        assert _one(server, "SELECT user_turn_count FROM knowledge_chatsession WHERE id = ?", chat) == TURNS
        assert _one(server, "SELECT compression_count FROM knowledge_chatsession WHERE id = ?", chat) >= 1
    assert _one(server, "SELECT count(*) FROM knowledge_reviewrun WHERE session_id = ?", secret) == 0
    assert _one(server, "SELECT count(*) FROM knowledge_reviewrun WHERE session_id = ?", ordinary) >= 1
    assert not [b for b in _requests_about(llm, SECRET) if is_review_start(b)]
    assert [b for b in _requests_about(llm, OPEN) if is_review_start(b)]
    assert not [b for b in _requests_about(llm, SECRET) if is_flush(b)]
    # Flushed before its compression and at its end.
    assert len([b for b in _requests_about(llm, OPEN) if is_flush(b)]) >= 2
    assert _provider_calls(server, secret) == set()
    assert _provider_calls(server, ordinary) == {"prefetch", "queue_prefetch", "sync_turn", "on_session_end"}
    # A private chat's counters never moved.
    assert server.query(
        "SELECT turns_since_memory, iters_since_skill FROM knowledge_chatsession WHERE id = ?", secret
    ) == [(0, 0)]

    # The search page finds the ordinary chat's words, not the private chat's.
    assert f"/c/{secret}/" not in client.get(f"/search/?q={SECRET}").body
    assert f"/c/{ordinary}/" in client.get(f"/search/?q={OPEN}").body

    # Neither does the agent's session_search, asked in a third chat.
    say(server, client, third, f"recall {SECRET}", f"recall {OPEN}")
    hidden = _session_search_result(server, third, SECRET)
    assert hidden["success"] is True and hidden["count"] == 0 and SECRET not in json.dumps(hidden["results"])
    found = _session_search_result(server, third, OPEN)
    assert [r["session_id"] for r in found["results"]] == [ordinary]
    # Nor is it recalled into another chat's question (session_recall), as the ordinary one is.
    recalled = " ".join(_recalled(body) for body in llm.chat_requests())
    assert OPEN in recalled and SECRET not in recalled


def _recalled(body: dict[str, Any]) -> str:
    """What the memory providers put in front of the request's questions (<memory-context>)."""
    fences = []
    for m in body["messages"]:
        text = m.get("content") if m.get("role") == "user" and isinstance(m.get("content"), str) else ""
        if "<memory-context>" in text:
            fences.append(text.split("<memory-context>", 1)[1].split("</memory-context>", 1)[0])
    return " ".join(fences)
