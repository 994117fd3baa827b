"""Faults end in a clear state and lose nothing.

Model-server faults (down, slow, HTTP errors, garbage, cut-off streams) are covered in
tests/agent/test_loop.py and tests/agent/commands/test_chat.py; this file covers the rest.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from django.db import connection

from agent.chat.runner import AgentSession, default_client_factory
from agent.learning import notify
from agent.learning.review import wait_for_reviews
from agent.loop import TurnDone
from knowledge.models import Message, ReviewRun
from tests import dbs
from tests.cli import ROOT, new_home
from tests.conftest import write_config
from tests.fakellm import Reply, ScriptedLLM, last_user_text
from tests.learning import SAVE_USER_PREF, script_review

pytestmark = pytest.mark.slow

DISK_FULL_SCRIPT = """
import json, django
django.setup()
from knowledge.memory.store import MemoryStore
from knowledge.provenance import Provenance
ops = [{"action": "add", "content": f"note {i}: " + "lorem ipsum dolor " * 3000} for i in range(40)]
print(json.dumps(MemoryStore().apply("memory", ops, Provenance(actor="user"))))
"""


def test_disk_full_while_writing_memory_keeps_the_old_file(tmp_path):
    home = new_home(tmp_path)
    mem = home.path / "memories"
    mem.mkdir()
    (mem / "MEMORY.md").write_text("first entry\n§\nsecond entry")
    (home.path / "config.yaml").write_text("memory:\n  memory_char_limit: 10000000\n")

    def limit_file_size() -> None:
        # The kernel refuses writes past 1 MB, as a full disk would (EFBIG instead of ENOSPC).
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (1_000_000, 1_000_000))

    r = subprocess.run(
        [sys.executable, "-c", DISK_FULL_SCRIPT],
        cwd=ROOT,
        env=home.env(),
        capture_output=True,
        text=True,
        timeout=60,
        preexec_fn=limit_file_size,
    )
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout.strip().splitlines()[-1])
    assert result["success"] is False and "Nothing was changed" in result["error"]
    assert (mem / "MEMORY.md").read_text() == "first entry\n§\nsecond entry"
    assert not list(mem.glob(".*.tmp"))


@pytest.mark.skipif(dbs.on_postgres(), reason="SQLite's whole-database write lock; PostgreSQL locks rows")
@pytest.mark.django_db(transaction=True)
def test_locked_database_makes_writers_wait_not_fail(home, llm):
    llm.default = lambda b: Reply(text=f"answer to {last_user_text(b)}")
    agent = AgentSession.open(source="cli")
    db_path = connection.settings_dict["NAME"]
    other = sqlite3.connect(db_path, timeout=30, check_same_thread=False)
    other.execute("BEGIN EXCLUSIVE")
    events: list[object] = []
    turn = threading.Thread(target=lambda: events.extend(agent.run_turn("written while the database is locked")))
    turn.start()
    # While another process holds the write lock the turn cannot store the message, so it has not
    # reached the model yet; it waits rather than failing, and goes on once the lock is released.
    turn.join(timeout=1.5)
    assert turn.is_alive() and llm.chat_requests() == []
    other.commit()
    other.close()
    turn.join(timeout=60)
    assert any(isinstance(e, TurnDone) for e in events)
    stored = list(Message.objects.filter(session=agent.session).values_list("role", "content"))
    assert stored == [
        ("user", "written while the database is locked"),
        ("assistant", "answer to written while the database is locked"),
    ]


@pytest.mark.django_db(transaction=True)
def test_review_thread_crash_is_recorded_and_chat_continues(home, llm):
    write_config(
        home, "memory:\n  nudge_interval: 1\nskills:\n  creation_nudge_interval: 0\nreview:\n  model: crashy\n"
    )
    script_review(llm, [SAVE_USER_PREF])

    def factory(config, model=None):
        if model == "crashy":
            raise RuntimeError("review worker exploded")
        return default_client_factory(config, model)

    heard: list[notify.ReviewNotice] = []
    unsubscribe = notify.subscribe(heard.append)

    def broken_listener(n: notify.ReviewNotice) -> None:
        raise ValueError("a broken tab")

    unsubscribe_broken = notify.subscribe(broken_listener)
    try:
        agent = AgentSession.open(source="cli", client_factory=factory)
        list(agent.run_turn("one"))
        assert wait_for_reviews(agent.session.pk, 30)
        events = list(agent.run_turn("two"))
        assert wait_for_reviews(agent.session.pk, 30)
    finally:
        unsubscribe()
        unsubscribe_broken()
    assert any(isinstance(e, TurnDone) and e.final_text == "ok" for e in events)
    runs = list(ReviewRun.objects.filter(session=agent.session))
    assert runs and all(r.status == "failed" and "review worker exploded" in r.error for r in runs)
    assert heard and heard[0].status == "failed"  # the broken listener did not stop this one


def test_process_killed_mid_turn_loses_nothing_said(tmp_path):
    server = ScriptedLLM()
    server.start()
    try:
        server.push(Reply(text="a very slow answer " * 200, chunk_delay=0.05))
        server.default = lambda b: Reply(text=f"answer to {last_user_text(b)}")
        home = new_home(tmp_path, server.base_url)
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), "chat", "--session", "k", "-m", "please remember my question"],
            cwd=ROOT,
            env=home.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 30
        while not server.chat_requests() and time.monotonic() < deadline:
            time.sleep(0.05)
        time.sleep(0.5)  # mid-stream
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if not dbs.on_postgres():
            with sqlite3.connect(home.path / "dashboard.sqlite3") as c:
                assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert dbs.query(home.path, "select content from knowledge_message where role='user'") == [
            ("please remember my question",)
        ]
        r = home.manage("chat", "--session", "k", "-m", "are you back?")
        assert r.returncode == 0, r.stderr
        assert "answer to are you back?" in r.stdout
        users = [m["content"] for m in server.chat_requests()[-1]["messages"] if m["role"] == "user"]
        assert users == ["please remember my question", "are you back?"]
    finally:
        server.stop()
