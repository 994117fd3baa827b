"""The README's first command, run for real: it prints a URL that serves the home page."""

from __future__ import annotations

import http.cookiejar
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parent.parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_serve_script_prints_url_that_serves_home_page(tmp_path):
    port = _free_port()
    # A fresh machine's dashboard: its own home and database, not the services a test profile started.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "HERMES_QUEUE")}
    env.update(HERMES_HOME=str(tmp_path / "home"), HERMES_PORT=str(port))
    proc = subprocess.Popen(
        [str(ROOT / "scripts" / "serve.sh")],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        url = None
        deadline = time.monotonic() + 240
        assert proc.stdout is not None
        before_url: list[str] = []
        while time.monotonic() < deadline and url is None:
            line = proc.stdout.readline()
            if not line:
                break
            before_url.append(line.strip())
            m = re.search(r"(http://127\.0\.0\.1:\d+/\S+)", line)
            if m:
                url = m.group(1)
        assert url, "serve.sh printed no URL"
        # Each step is announced before it runs, so a first install is not a silent minute.
        steps = [line for line in before_url if line.startswith("==> ")]
        assert [s.split(" (")[0] for s in steps[-4:]] == [
            "==> Installing the Python packages",
            "==> Preparing the database",
            "==> Collecting the static files",
            "==> Starting the dashboard",
        ]
        # The fresh home's migrations are listed as they are applied.
        assert any(line.startswith("Applying knowledge.0001") for line in before_url)
        assert f":{port}/" in url
        jar = http.cookiejar.CookieJar()
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
        body = ""
        for _ in range(100):  # daphne needs a moment after printing
            try:
                with opener.open(url, timeout=5) as resp:
                    body = resp.read().decode()
                    assert resp.status == 200 and resp.url.rstrip("/").endswith(f":{port}")
                break
            except OSError:
                time.sleep(0.2)
        assert "Hermes" in body and "<textarea" in body  # the chat page
        # Without the token only the login page is reachable.
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5) as resp:
            assert "/login" in resp.url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
