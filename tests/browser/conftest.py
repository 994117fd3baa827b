"""Browser-test fixtures, shared by every page's Playwright tests.

- `llm_server` (session) / `llm` (per test, reset): the scripted OpenAI-compatible server the
  dashboard talks to (tests/fakellm.py), configured through the server's environment.
- `daphne_server` (session; not named `live_server`, which pytest-django claims and would make
  every test set up a test database): a real daphne subprocess on a free port with its own temp HERMES_HOME,
  a migrated database, config.yaml (BROWSER_CONFIG) and a known login token. Helpers:
  `.url`, `.home`, `.login_url(next)`, `.query(sql, *args)`, `.write_skill(...)`, `.log()`.
- `browser` (session): Debian's Chromium through Playwright's sync API.
- `context` / `page` (per test): a logged-in browser context and its first page (at "/");
  open a second tab with `context.new_page()` (same login).
- `screenshot(name, page=None)`: saves artifacts/screenshots/<name>.png (gitignored).

Run these in their own pytest process (`pytest -m browser tests/browser`): Playwright's sync
API breaks later pytest-asyncio tests in the same process (DESIGN "Known traps").
"""

from __future__ import annotations

import os
import re
import secrets
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.fakellm import Reply, ScriptedLLM

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "artifacts" / "screenshots"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
# Model errors must surface at once (no client retries); the memory flush at "new session" is
# off so ending a chat never consumes a reply scripted for the next test.
BROWSER_CONFIG = """\
model:
  max_retries: 0
  timeout: 20
memory:
  flush_min_turns: 0
"""
_LISTENING = re.compile(r"Listening on TCP address [\d.]+:(\d+)")


@dataclass
class LiveServer:
    url: str
    home: Path
    token: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def login_url(self, next_path: str = "/") -> str:
        return f"{self.url}/login?token={self.token}&next={next_path}"

    def query(self, sql: str, *args: Any) -> list[tuple[Any, ...]]:
        """Read the server's database (e.g. what was stored) from the test."""
        with sqlite3.connect(self.home / "dashboard.sqlite3", timeout=20) as db:
            return db.execute(sql, args).fetchall()

    def write_skill(self, name: str, description: str, body: str, category: str = "") -> Path:
        folder = self.home / "skills" / category / name if category else self.home / "skills" / name
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "SKILL.md"
        path.write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}\n", encoding="utf-8")
        return path

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")


@pytest.fixture(scope="session")
def llm_server() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def llm(llm_server: ScriptedLLM) -> ScriptedLLM:
    """The scripted model, emptied of the previous test's script and requests."""
    with llm_server._lock:
        llm_server.queue.clear()
        llm_server.rules.clear()
        llm_server.requests.clear()
    llm_server.default = lambda body: Reply(text="ok")
    return llm_server


def _server_env(home: Path, llm: ScriptedLLM) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_DB", "HERMES_DEBUG")}
    env.update(
        {
            "HERMES_HOME": str(home),
            "HERMES_TEST_ISOLATED": "1",  # keep this home (settings re-homes pytest processes otherwise)
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "test-key",
            "HERMES_MODEL": "scripted-model",
            "DJANGO_SETTINGS_MODULE": "hermes_site.settings",
            "PYTHONUNBUFFERED": "1",
            # INFO so daphne's "Listening on TCP address" line (the real port) reaches the log.
            "HERMES_LOG_LEVEL": "INFO",
        }
    )
    return env


def _wait_for_port(proc: subprocess.Popen[bytes], log_path: Path, timeout: float = 60) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = _LISTENING.search(log_path.read_text(encoding="utf-8", errors="replace"))
        if match:
            return int(match.group(1))
        if proc.poll() is not None:
            break
        time.sleep(0.1)
    raise RuntimeError(f"daphne did not start:\n{log_path.read_text(errors='replace')}")


@pytest.fixture(scope="session")
def daphne_server(tmp_path_factory: pytest.TempPathFactory, llm_server: ScriptedLLM) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("browser-home")
    (home / "config.yaml").write_text(BROWSER_CONFIG, encoding="utf-8")
    token = secrets.token_urlsafe(18)
    (home / "login_token").write_text(token, encoding="utf-8")
    env = _server_env(home, llm_server)
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert migrate.returncode == 0, migrate.stderr
    log_path = home / "daphne.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", "0", "hermes_site.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        port = _wait_for_port(proc, log_path)
        yield LiveServer(f"http://127.0.0.1:{port}", home, token, proc, log_path)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def context(browser: Browser, daphne_server: LiveServer) -> Iterator[BrowserContext]:
    ctx = browser.new_context(base_url=daphne_server.url, viewport={"width": 1280, "height": 860})
    ctx.set_default_timeout(15_000)
    yield ctx
    ctx.close()


@pytest.fixture
def page(context: BrowserContext, daphne_server: LiveServer) -> Page:
    """A logged-in page, at "/"."""
    p = context.new_page()
    p.goto(daphne_server.login_url("/"))
    p.wait_for_url(f"{daphne_server.url}/")
    return p


@pytest.fixture
def screenshot(request: pytest.FixtureRequest) -> Callable[..., Path]:
    def take(name: str, page: Page | None = None, full_page: bool = False) -> Path:
        target = page or request.getfixturevalue("page")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        path = SCREENSHOTS / f"{name}.png"
        target.screenshot(path=str(path), full_page=full_page)
        return path

    return take
