"""`manage.py serve`: the first line printed is the login URL, on HERMES_PORT, with the token of
the home it serves."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _first_line(env: dict[str, str]) -> str:
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # daphne replaces the process; the whole group is stopped below
    )
    try:
        assert proc.stdout is not None
        return proc.stdout.readline().strip()
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # nothing to clean up: it was only starting
        proc.wait(timeout=30)


def test_serve_prints_the_login_url_for_hermes_port_and_the_homes_token(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    port = _free_port()
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_PORT": str(port), "PYTHONUNBUFFERED": "1"}
    line = _first_line(env)
    token = (home / "login_token").read_text().strip()
    assert line == f"Hermes dashboard: http://127.0.0.1:{port}/login?token={token}"
    assert len(token) >= 24 and oct((home / "login_token").stat().st_mode & 0o777) == "0o600"


def test_serve_on_a_fresh_home_migrates_so_the_link_it_prints_works(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_PORT": str(_free_port()), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)  # the home's own SQLite file, as a person's first run has
    env.pop("HERMES_DB", None)
    _first_line(env)
    with sqlite3.connect(home / "dashboard.sqlite3") as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"knowledge_chatsession", "django_session"} <= tables
