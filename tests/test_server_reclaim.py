"""A daphne worker killed (SIGKILL) while its own threads run a review or the memory flush of
"New chat": another daphne worker, alive all along and never restarted, takes the job over and
runs it, once. The rounds come every HERMES_RECLAIM_SECONDS (1 s here, 10 s by default)."""

from __future__ import annotations

import signal
import threading

import pytest

from tests.chat_socket import say
from tests.cli import wait_until
from tests.daphne import Daphne, Http, another_worker, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text
from tests.learning import is_flush, is_review_followup, is_review_start
from tests.test_scale_out import EVERY_TURN_REVIEWED, FLUSH_AFTER_ONE_TURN, _first_attempt_hangs

pytestmark = pytest.mark.slow

FAST_ROUNDS = {"HERMES_RECLAIM_SECONDS": "1"}


def _llm() -> ScriptedLLM:
    llm = ScriptedLLM()
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    llm.start()
    return llm


def _open_chat(server: Daphne) -> tuple[Http, str]:
    client = Http(server.port)
    client.login(server.token)
    assert client.get("/").status == 200
    (session_id,) = server.query("SELECT id FROM knowledge_chatsession")[0]
    return client, session_id


def _kill(server: Daphne) -> None:
    server.process.send_signal(signal.SIGKILL)
    server.process.wait()


def _saved_once(server: Daphne, actor: str) -> None:
    user_md = (server.home / "memories" / "USER.md").read_text(encoding="utf-8")
    assert user_md.count("Prefers Debian base images") == 1
    assert server.query("SELECT count(*) FROM knowledge_knowledgechange WHERE actor = ?", actor) == [(1,)]


def test_the_flush_of_a_killed_server_is_run_once_by_the_live_one(tmp_path):
    llm = _llm()
    first_attempt_started, never = threading.Event(), threading.Event()
    llm.when(is_flush, _first_attempt_hangs(first_attempt_started, never))
    env = {**model_env(llm.base_url), **FAST_ROUNDS}
    try:
        with (
            start_daphne(tmp_path / "home", config=FLUSH_AFTER_ONE_TURN, extra_env=env) as a,
            another_worker(a, extra_env=env) as b,
        ):
            client, session_id = _open_chat(a)
            say(a, client, session_id, "I use Debian base images")
            assert client.csrf_post("/c/new/", {"from": session_id}).status == 302  # "New chat", on A
            wait_until(first_attempt_started.is_set, "the flush's first model call, on A")
            end = "SELECT end_worker, ended_at FROM knowledge_chatsession WHERE id=?"
            ((holder, ended),) = a.query(end, session_id)
            assert holder.endswith(f":{a.process.pid}") and not ended
            _kill(a)  # mid-flush: its model call is still waiting

            wait_until(lambda: a.query(end, session_id)[0][1], "the live server to end the session", timeout=60)
            assert b.process.poll() is None  # alive all along, never restarted
            assert a.query(end, session_id)[0][0] == holder.rsplit(":", 1)[0] + f":{b.process.pid}"
            _saved_once(a, "flush")
            assert len([body for body in llm.chat_requests() if is_flush(body)]) == 2  # the killed one, the rerun
            assert f"took over 1 job(s) of a stopped process: ['{session_id}']" in b.log()
    finally:
        never.set()
        llm.stop()


def test_the_review_of_a_killed_server_is_run_once_by_the_live_one(tmp_path):
    llm = _llm()
    first_attempt_started, never = threading.Event(), threading.Event()
    llm.when(is_review_start, _first_attempt_hangs(first_attempt_started, never))
    llm.when(is_review_followup, Reply(text="Saved."))
    env = {**model_env(llm.base_url), **FAST_ROUNDS}
    try:
        with (
            start_daphne(tmp_path / "home", config=EVERY_TURN_REVIEWED, extra_env=env) as a,
            another_worker(a, extra_env=env) as b,
        ):
            client, session_id = _open_chat(a)
            say(a, client, session_id, "I use Debian base images")
            wait_until(first_attempt_started.is_set, "the review's first model call, on A")
            ((holder, status),) = a.query("SELECT worker, status FROM knowledge_reviewrun")
            assert holder.endswith(f":{a.process.pid}") and status == "running"
            _kill(a)  # mid-review: its model call is still waiting

            done = "SELECT count(*), max(status), max(summary), max(worker) FROM knowledge_reviewrun"
            wait_until(lambda: a.query(done)[0][1] == "done", "the live server to finish the review", timeout=60)
            assert b.process.poll() is None  # alive all along, never restarted
            b_worker = holder.rsplit(":", 1)[0] + f":{b.process.pid}"
            assert a.query(done) == [(1, "done", "User profile updated", b_worker)]
            _saved_once(a, "review")
            assert len([body for body in llm.chat_requests() if is_review_start(body)]) == 2
    finally:
        never.set()
        llm.stop()
