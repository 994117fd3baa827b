"""The README's first command on a fresh clone, to a first answer: `./scripts/serve.sh` in a `git
clone` of this repository (what a person gets: the committed files, no `.venv`) creates its own
virtual environment with what running needs (pip's cache keeps this from being a download each
time), says each step, and prints the login link last. Through the HTTP and websocket requests
the browser makes, the first-run form is pointed at the scripted model server: Check answers
without saving, Save writes the settings, and a message sent on the chat's socket gets its answer.
The browser side of the same form: tests/browser/test_chat_setup.py."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from websockets.asyncio.client import connect as ws_connect
from websockets.typing import Origin

from tests.chat_socket import frames_until
from tests.daphne import Http
from tests.fakellm import Reply, ScriptedLLM, last_user_text

# A person's shell has no test services: the same in both profiles, so run once (scripts/test.sh).
pytestmark = [pytest.mark.slow, pytest.mark.services_free]

ROOT = Path(__file__).resolve().parent.parent
FIRST_RUN_SECONDS = 900  # a fresh virtual environment: pip installs every package (from its cache)
# What serve.sh is quiet about: pip's and migrate's own progress, daphne's notes and request log.
NOISE = re.compile(r"^(Collecting|Installing collected|Successfully installed|Operations to perform|  Applying|"
                   r"Applying|Starting server|Listening on|Configuring endpoint|HTTP/2|.*\"(GET|POST) /)")  # fmt: skip


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def model_server() -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM()
    llm.models = ["first-model", "other-model"]
    llm.default = lambda body: Reply(text=f"first answer to {last_user_text(body)}")
    llm.start()
    yield llm
    llm.stop()


@pytest.fixture
def fresh_clone(tmp_path: Path) -> Path:
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True, timeout=300)
    assert not (clone / ".venv").exists()
    return clone


def _fresh_env(home: Path, port: int) -> dict[str, str]:
    """A person's shell: no services of a test profile, no model settings, no virtual environment."""
    drop = ("DATABASE_URL", "REDIS_URL", "HERMES_QUEUE", "OPENAI_BASE_URL", "OPENAI_API_KEY", "HERMES_MODEL",
            "HERMES_ACCESS_LOG", "VIRTUAL_ENV", "DJANGO_SETTINGS_MODULE", "HERMES_DB", "PYTHONPATH")  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "HERMES_HOME": str(home), "HERMES_PORT": str(port)}


def _lines_until_link(proc: subprocess.Popen[str]) -> list[str]:
    assert proc.stdout is not None
    lines: list[str] = []
    deadline = time.monotonic() + FIRST_RUN_SECONDS
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        lines.append(line.rstrip("\n"))
        if line.startswith("Hermes dashboard: http://"):
            return lines
    raise AssertionError("serve.sh printed no login link:\n" + "\n".join(lines))


async def _say(port: int, cookie: str, session_id: str, text: str) -> list[dict]:
    async with ws_connect(
        f"ws://127.0.0.1:{port}/ws/chat/{session_id}/",
        origin=Origin(f"http://127.0.0.1:{port}"),
        additional_headers={"Cookie": cookie},
        open_timeout=30,
    ) as ws:
        await ws.send(json.dumps({"type": "message", "text": text}))
        return await frames_until(ws, "done")


def test_serve_sh_on_a_fresh_clone_reaches_a_first_answer(tmp_path, fresh_clone, model_server):
    port, home = _free_port(), tmp_path / "home"
    proc = subprocess.Popen(
        [str(fresh_clone / "scripts" / "serve.sh")],
        cwd=fresh_clone,
        env=_fresh_env(home, port),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        lines = _lines_until_link(proc)
        # Each step is said before it runs; the rest is quiet; the link is the last line.
        steps = [line.split(" (")[0] for line in lines if line.startswith("==> ")]
        assert steps == [
            "==> Creating the virtual environment in .venv",
            "==> Installing the Python packages",
            "==> Preparing the database",
            "==> Collecting the static files",
            f"==> Starting the dashboard on http://127.0.0.1:{port}/",
        ], lines
        assert not [line for line in lines if NOISE.match(line)], lines
        link = lines[-1].removeprefix("Hermes dashboard: ")
        assert link.startswith(f"http://127.0.0.1:{port}/login?token=")
        # Only what running needs: the test tools stay out of the dashboard's environment.
        site = next((fresh_clone / ".venv" / "lib").glob("python3*/site-packages"))
        assert (site / "daphne").is_dir() and not (site / "pytest").exists() and not (site / "mypy").exists()

        # The link works at once (it is printed once the port listens) and logs the browser in.
        browser = Http(port)
        resp = browser.get(link.removeprefix(f"http://127.0.0.1:{port}"))
        assert resp.status == 302 and "sessionid" in browser.cookies
        page = browser.get("/")
        assert page.status == 200 and 'id="setup-panel"' in page.body and "csrftoken" in browser.cookies
        session_id = re.search(r'id="chat"[^>]*data-session="([^"]+)"', page.body)
        assert session_id, page.body[:2000]

        form = {"place": "setup", "base_url": model_server.base_url, "key": "sk-first-run-5678", "model": "first-model"}
        htmx = {"HX-Request": "true"}
        checked = browser.csrf_post("/settings/connection/check/", form, headers=htmx).body
        assert "Connected — the server lists 2 models: first-model, other-model." in checked
        assert "Checked only: nothing was saved." in checked
        assert not (yaml.safe_load((home / "config.yaml").read_text()).get("model") or {}).get("name")

        saved = browser.csrf_post("/settings/connection/", form, headers=htmx).body
        assert 'id="connection-saved"' in saved and "Send your first message below." in saved
        on_disk = yaml.safe_load((home / "config.yaml").read_text())["model"]
        assert (on_disk["base_url"], on_disk["name"]) == (model_server.base_url, "first-model")
        assert (home / "api_key").read_text().strip() == "sk-first-run-5678"

        cookie = f"sessionid={browser.cookies['sessionid']}"
        frames = asyncio.run(_say(port, cookie, session_id.group(1), "hello, first run"))
        assert frames[-1]["type"] == "done" and "first answer to hello, first run" in frames[-1]["final_html"]
        assert model_server.chat_requests()[-1]["model"] == "first-model"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        rest, _ = proc.communicate(timeout=30)
    # Nothing was logged for the requests above: the link stayed the last thing on screen.
    assert not [line for line in rest.splitlines() if NOISE.match(line)], rest


def test_serve_sh_again_skips_the_install_and_says_so(tmp_path, fresh_clone):
    """A second start in the same clone does not run pip again (its requirements did not change)."""
    venv = fresh_clone / ".venv"
    port = _free_port()
    subprocess.run(["python3", "-m", "venv", str(venv)], check=True, timeout=300)
    # A stand-in for an installed environment: the stamp says requirements.txt is installed, so
    # serve.sh must not call pip (a pip that would run fails loudly here).
    (venv / "bin" / "pip").write_text("#!/bin/sh\necho pip must not run >&2\nexit 3\n")
    stamp = subprocess.run(["sha256sum", "requirements.txt"], cwd=fresh_clone, capture_output=True, text=True)
    (venv / ".requirements.sha256").write_text(stamp.stdout)
    out = subprocess.run(
        [str(fresh_clone / "scripts" / "serve.sh")],
        cwd=fresh_clone,
        env=_fresh_env(tmp_path / "home", port),
        capture_output=True,
        text=True,
        timeout=120,
    )
    # The packages are not there, so it stops at the first Django command: after saying it skipped pip.
    assert "==> Python packages are up to date (requirements.txt)" in out.stdout, out.stdout + out.stderr
    assert "pip must not run" not in out.stderr
