"""`manage.py serve`: it says where it starts, then prints the login URL (on HERMES_PORT, with the
token of the home it serves) once the port listens; requests are logged only when asked."""

from __future__ import annotations

import os
import signal
import socket
import sqlite3
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _first_lines(env: dict[str, str], *args: str, then_get: str = "") -> list[str]:
    """What serve prints up to its login link; with `then_get`, also what it prints after that request."""
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "manage.py"), "serve", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # daphne replaces the process; the whole group is stopped below
    )
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline().strip()]
        while lines[-1] and not lines[-1].startswith("Hermes dashboard:"):
            lines.append(proc.stdout.readline().strip())
        if then_get:
            port = env["HERMES_PORT"]
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{then_get}", timeout=30) as resp:
                assert resp.status == 200  # the link printed works at once: the port already listens
            os.killpg(proc.pid, signal.SIGTERM)
            rest, _ = proc.communicate(timeout=30)
            lines += [line.strip() for line in rest.splitlines()]
        return lines
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)  # nothing to clean up: it was only starting
            proc.wait(timeout=30)


def test_serve_prints_the_login_url_for_hermes_port_and_the_homes_token(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    port = _free_port()
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_PORT": str(port), "PYTHONUNBUFFERED": "1"}
    starting, line = _first_lines(env)
    token = (home / "login_token").read_text().strip()
    assert starting.startswith(f"==> Starting the dashboard on http://127.0.0.1:{port}/")
    assert line == f"Hermes dashboard: http://127.0.0.1:{port}/login?token={token}"
    assert len(token) >= 24 and oct((home / "login_token").stat().st_mode & 0o777) == "0o600"


def test_serve_on_a_fresh_home_migrates_so_the_link_it_prints_works(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HERMES_HOME": str(home), "HERMES_PORT": str(_free_port()), "PYTHONUNBUFFERED": "1"}
    env.pop("DATABASE_URL", None)  # the home's own SQLite file, as a person's first run has
    env.pop("HERMES_DB", None)
    _first_lines(env)
    with sqlite3.connect(home / "dashboard.sqlite3") as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"knowledge_chatsession", "django_session"} <= tables


def test_requests_are_logged_only_when_asked(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    env = {**os.environ, "HERMES_HOME": str(home), "PYTHONUNBUFFERED": "1"}
    env.pop("HERMES_ACCESS_LOG", None)
    quiet = _first_lines({**env, "HERMES_PORT": str(_free_port())}, then_get="/login?next=/quiet-check/")
    assert quiet[-1].startswith("Hermes dashboard:")  # the link stays the last line on screen
    logged = _first_lines({**env, "HERMES_PORT": str(_free_port())}, "--access-log", then_get="/login?next=/logged/")
    assert any("/login?next=/logged/" in line for line in logged[2:])
    by_env = _first_lines(
        {**env, "HERMES_PORT": str(_free_port()), "HERMES_ACCESS_LOG": "1"}, then_get="/login?next=/by-env/"
    )
    assert any("/login?next=/by-env/" in line for line in by_env[2:])
