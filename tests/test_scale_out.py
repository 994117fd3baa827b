"""Past one process: a toast crosses daphne workers through Redis, and a review or the memory
flush of "New chat" on the durable queue survives its worker being killed mid-job (it completes
once, not twice)."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import subprocess
import threading
from collections.abc import Callable
from typing import Any

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.typing import Origin

from agent.chat.titles import TITLE_PROMPT
from tests.cli import CLIHome, start_learning_worker, wait_until
from tests.daphne import Daphne, Http, another_worker, model_env, start_daphne, with_test_defaults
from tests.fakellm import Reply, ScriptedLLM, last_user_text
from tests.learning import SAVE_USER_PREF, is_flush, is_review_followup, is_review_start

pytestmark = pytest.mark.slow

EVERY_TURN_REVIEWED = "memory:\n  nudge_interval: 1\n  flush_min_turns: 0\nskills:\n  creation_nudge_interval: 0\n"


def _llm() -> ScriptedLLM:
    llm = ScriptedLLM()
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    llm.start()
    return llm


@pytest.mark.skipif(not os.environ.get("REDIS_URL"), reason="needs Redis (scripts/test.sh starts one)")
def test_review_on_worker_a_toasts_a_page_connected_to_worker_b(tmp_path):
    llm = _llm()
    llm.when(is_review_start, Reply(tool_calls=[SAVE_USER_PREF]))
    llm.when(is_review_followup, Reply(text="Saved."))
    env = {**model_env(llm.base_url), "REDIS_URL": os.environ["REDIS_URL"], "HERMES_REDIS_PREFIX": secrets.token_hex(4)}
    try:
        with (
            start_daphne(tmp_path / "home", config=EVERY_TURN_REVIEWED, extra_env=env) as a,
            another_worker(a, extra_env=env) as b,
        ):
            client = Http(a.port)
            client.login(a.token)
            assert client.get("/").status == 200
            (session_id,) = a.query("SELECT id FROM knowledge_chatsession")[0]
            cookie = {"Cookie": f"sessionid={client.cookies['sessionid']}"}

            async def scenario() -> dict[str, Any]:
                async with (
                    ws_connect(
                        f"ws://127.0.0.1:{b.port}/ws/notify/", origin=Origin(b.origin), additional_headers=cookie
                    ) as toasts,
                    ws_connect(
                        f"ws://127.0.0.1:{a.port}/ws/chat/{session_id}/",
                        origin=Origin(a.origin),
                        additional_headers=cookie,
                    ) as chat,
                ):
                    await chat.send(json.dumps({"type": "message", "text": "I use Debian base images"}))
                    while True:
                        frame = json.loads(await asyncio.wait_for(toasts.recv(), 60))
                        if frame["type"] == "review":
                            return frame

            toast = asyncio.run(scenario())
            assert toast["line"] == "💾 1 saved"
            assert toast["session_id"] == session_id
    finally:
        llm.stop()


def _first_attempt_hangs(started: threading.Event, never: threading.Event) -> Callable[[dict[str, Any]], Reply]:
    """A model whose first answer never comes (its worker is killed while waiting); later ones save."""

    def answer(body: dict[str, Any]) -> Reply:
        if not started.is_set():
            started.set()
            never.wait(60)
        return Reply(tool_calls=[SAVE_USER_PREF])

    return answer


def test_queue_worker_killed_mid_review_is_restarted_and_the_review_completes_once(tmp_path):
    llm = _llm()
    first_attempt_started, never = threading.Event(), threading.Event()
    review = _first_attempt_hangs(first_attempt_started, never)
    llm.when(is_review_start, review)
    llm.when(is_review_followup, Reply(text="Saved."))
    home = CLIHome(tmp_path / "home", base_url=llm.base_url)
    home.path.mkdir()
    (home.path / "config.yaml").write_text(with_test_defaults(EVERY_TURN_REVIEWED), encoding="utf-8")
    log = tmp_path / "worker.log"
    try:
        chat = home.manage(
            "chat", "-m", "I use Debian base images", "--review-wait", "0", env={"HERMES_QUEUE": "tasks"}
        )
        assert chat.returncode == 0, chat.stderr
        assert home.query("SELECT status, worker FROM knowledge_reviewrun") == [("queued", "queue")]

        worker = start_learning_worker(home, log, HERMES_QUEUE="tasks")
        wait_until(first_attempt_started.is_set, "the review's first model call")
        worker.send_signal(signal.SIGKILL)  # mid-review: its model call is still waiting
        worker.wait()
        assert home.query("SELECT status FROM knowledge_reviewrun") == [("running",)]

        worker = start_learning_worker(home, log, HERMES_QUEUE="tasks")
        try:
            wait_until(
                lambda: home.query("SELECT status FROM knowledge_reviewrun") == [("done",)], "the review to finish"
            )
        finally:
            worker.terminate()
            worker.wait(timeout=30)
        assert home.query("SELECT count(*), max(summary) FROM knowledge_reviewrun") == [(1, "User profile updated")]
        user_md = (home.path / "memories" / "USER.md").read_text(encoding="utf-8")
        assert user_md.count("Prefers Debian base images") == 1
        assert home.query("SELECT count(*) FROM knowledge_knowledgechange WHERE actor = 'review'") == [(1,)]
        statuses = sorted(s for (s,) in home.query("SELECT status FROM django_tasks_database_dbtaskresult"))
        assert statuses == ["FAILED", "SUCCESSFUL"]  # the killed attempt is closed, the rerun succeeded
    finally:
        never.set()
        llm.stop()


def test_a_live_queue_worker_takes_over_the_review_of_one_killed_beside_it(tmp_path):
    """Two workers run; the one holding the review is killed and none is started again: the other,
    alive all along, puts the review back on the queue and runs it, once."""
    llm = _llm()
    first_attempt_started, never = threading.Event(), threading.Event()
    llm.when(is_review_start, _first_attempt_hangs(first_attempt_started, never))
    llm.when(is_review_followup, Reply(text="Saved."))
    home = CLIHome(tmp_path / "home", base_url=llm.base_url)
    home.path.mkdir()
    (home.path / "config.yaml").write_text(with_test_defaults(EVERY_TURN_REVIEWED), encoding="utf-8")
    log = tmp_path / "worker.log"
    workers: list[subprocess.Popen[bytes]] = []
    try:
        chat = home.manage(
            "chat", "-m", "I use Debian base images", "--review-wait", "0", env={"HERMES_QUEUE": "tasks"}
        )
        assert chat.returncode == 0, chat.stderr
        workers = [
            start_learning_worker(home, log, HERMES_QUEUE="tasks"),
            start_learning_worker(home, log, HERMES_QUEUE="tasks"),
        ]
        wait_until(first_attempt_started.is_set, "the review's first model call")
        ((holder,),) = home.query("SELECT worker FROM knowledge_reviewrun")
        victim = next(w for w in workers if holder.endswith(f":{w.pid}"))
        victim.send_signal(signal.SIGKILL)  # mid-review: its model call is still waiting
        victim.wait()
        survivor = next(w for w in workers if w is not victim)
        wait_until(lambda: home.query("SELECT status FROM knowledge_reviewrun") == [("done",)], "the review to finish")
        assert survivor.poll() is None  # the same process, never restarted
        assert home.query("SELECT count(*), max(summary) FROM knowledge_reviewrun") == [(1, "User profile updated")]
        user_md = (home.path / "memories" / "USER.md").read_text(encoding="utf-8")
        assert user_md.count("Prefers Debian base images") == 1
        assert home.query("SELECT worker FROM knowledge_reviewrun") == [
            (holder.rsplit(":", 1)[0] + f":{survivor.pid}",)
        ]
    finally:
        never.set()
        for w in workers:
            if w.poll() is None:
                w.terminate()
                w.wait(timeout=30)
        llm.stop()


# -- the memory flush of "New chat" on the durable queue ----------------------------------------

FLUSH_AFTER_ONE_TURN = "memory:\n  nudge_interval: 0\n  flush_min_turns: 1\nskills:\n  creation_nudge_interval: 0\n"


def _chat_then_new_chat(server: Daphne, text: str) -> str:
    """A person says `text` in the browser's chat, then presses "New chat" (twice: two tabs)."""
    client = Http(server.port)
    client.login(server.token)
    assert client.get("/").status == 200
    (session_id,) = server.query("SELECT id FROM knowledge_chatsession")[0]
    cookie = {"Cookie": f"sessionid={client.cookies['sessionid']}"}

    async def turn() -> None:
        url = f"ws://127.0.0.1:{server.port}/ws/chat/{session_id}/"
        async with ws_connect(url, origin=Origin(server.origin), additional_headers=cookie) as chat:
            await chat.send(json.dumps({"type": "message", "text": text}))
            while json.loads(await asyncio.wait_for(chat.recv(), 60))["type"] != "ready":
                pass

    asyncio.run(turn())
    for _ in range(2):
        assert client.csrf_post("/c/new/", {"from": session_id}).status == 302
    return session_id


def _ended(home: CLIHome, session_id: str) -> bool:
    return bool(home.query("SELECT ended_at FROM knowledge_chatsession WHERE id=?", session_id)[0][0])


def _flush_landed_once(home: CLIHome, session_id: str) -> None:
    assert home.query("SELECT end_reason FROM knowledge_chatsession WHERE id=?", session_id) == [("new session",)]
    user_md = (home.path / "memories" / "USER.md").read_text(encoding="utf-8")
    assert user_md.count("Prefers Debian base images") == 1
    assert home.query("SELECT count(*) FROM knowledge_knowledgechange WHERE actor = 'flush'") == [(1,)]


def _ends_queued(home: CLIHome) -> list[tuple[Any, ...]]:
    return home.query(
        "SELECT task_path, status FROM django_tasks_database_dbtaskresult WHERE task_path LIKE '%session_end%'"
    )


def test_new_chat_on_the_queue_is_flushed_by_the_queue_worker_once_and_titles_come_from_it_too(tmp_path):
    llm = _llm()
    llm.when(is_flush, Reply(tool_calls=[SAVE_USER_PREF]))
    llm.when(lambda body: body["messages"][0]["content"] == TITLE_PROMPT, Reply(text="Debian base images"))
    env = {**model_env(llm.base_url), "HERMES_QUEUE": "tasks"}
    config = FLUSH_AFTER_ONE_TURN + "chat:\n  auto_title: true\n"
    try:
        with start_daphne(tmp_path / "home", config=config, extra_env=env) as server:
            session_id = _chat_then_new_chat(server, "I use Debian base images")
            home = CLIHome(server.home, base_url=llm.base_url)
            # The server only put the jobs on the queue, carrying the session's id: the end once.
            assert _ends_queued(home) == [("agent.chat.session_end.end_task", "READY")]
            queued = home.query("SELECT task_path, args_kwargs FROM django_tasks_database_dbtaskresult")
            jobs = {path: json.loads(a) if isinstance(a, str) else a for path, a in queued}  # text on SQLite
            assert jobs["agent.chat.titles.title_task"] == {"args": [session_id], "kwargs": {}}
            assert not _ended(home, session_id) and len(llm.chat_requests()) == 1  # the answer only
            worker = start_learning_worker(home, tmp_path / "worker.log", HERMES_QUEUE="tasks")
            try:
                wait_until(lambda: _ended(home, session_id), "the queue worker to end the session")
                title = "SELECT title, title_source FROM knowledge_chatsession WHERE id=?"
                wait_until(lambda: home.query(title, session_id) == [("Debian base images", "model")], "the title")
            finally:
                worker.terminate()
                worker.wait(timeout=30)
        assert len([b for b in llm.chat_requests() if is_flush(b)]) == 1
        _flush_landed_once(home, session_id)
        assert _ends_queued(home) == [("agent.chat.session_end.end_task", "SUCCESSFUL")]
    finally:
        llm.stop()


def test_queue_worker_killed_mid_flush_is_restarted_and_the_flush_lands_once(tmp_path):
    llm = _llm()
    first_attempt_started, never = threading.Event(), threading.Event()
    flush = _first_attempt_hangs(first_attempt_started, never)
    llm.when(is_flush, flush)
    env = {**model_env(llm.base_url), "HERMES_QUEUE": "tasks"}
    log = tmp_path / "worker.log"
    try:
        with start_daphne(tmp_path / "home", config=FLUSH_AFTER_ONE_TURN, extra_env=env) as server:
            session_id = _chat_then_new_chat(server, "I use Debian base images")
        home = CLIHome(server.home, base_url=llm.base_url)
        worker = start_learning_worker(home, log, HERMES_QUEUE="tasks")
        wait_until(first_attempt_started.is_set, "the flush's first model call")
        worker.send_signal(signal.SIGKILL)  # mid-flush: its model call is still waiting
        worker.wait()
        (held_by,) = home.query("SELECT end_worker FROM knowledge_chatsession WHERE id=?", session_id)[0]
        assert held_by.endswith(f":{worker.pid}") and not _ended(home, session_id)

        worker = start_learning_worker(home, log, HERMES_QUEUE="tasks")
        try:
            wait_until(lambda: _ended(home, session_id), "the flush to finish")
        finally:
            worker.terminate()
            worker.wait(timeout=30)
        _flush_landed_once(home, session_id)
        statuses = sorted(s for _, s in _ends_queued(home))
        assert statuses == ["FAILED", "SUCCESSFUL"]  # the killed attempt is closed, the rerun succeeded
    finally:
        never.set()
        llm.stop()
