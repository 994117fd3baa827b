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
API breaks later pytest-asyncio tests in the same process (docs/DECISIONS.md, record 16).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, sync_playwright

from tests.daphne import ROOT, Daphne, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM

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
# The browser tests' server: tests/daphne.py's Daphne (url, home, token, login_url, query,
# write_skill, log).
LiveServer = Daphne


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
    llm_server.models = ["scripted-model"]
    return llm_server


@pytest.fixture(scope="session")
def daphne_server(tmp_path_factory: pytest.TempPathFactory, llm_server: ScriptedLLM) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("browser-home")
    with start_daphne(home, BROWSER_CONFIG, model_env(llm_server.base_url)) as server:
        yield server


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
