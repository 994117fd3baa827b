"""A tab on worker B shows an answer streaming from worker A; A is killed (SIGKILL): the tab says
the server writing the answer stopped, leaves "busy", keeps what it saw after a reload, and the
next message is answered by B. Its own two daphne workers, their frames crossing Redis."""

from __future__ import annotations

import os
import secrets
import signal

import pytest
from playwright.sync_api import Browser, Page, expect

from agent.chat.presenter import ENDINGS
from tests.browser.chat_helpers import send
from tests.daphne import Daphne, another_worker, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text
from tests.redis_server import redis_url

pytestmark = pytest.mark.browser

SLOW = "".join(f"part {n} of a long answer. " for n in range(600))
STOPPED = "The server writing this answer stopped"


def _tab(browser: Browser, server: Daphne, path: str) -> Page:
    page = browser.new_context(base_url=server.url).new_page()
    page.set_default_timeout(20_000)
    page.goto(server.login_url(path))
    page.wait_for_selector('#chat[data-connected="1"]')
    return page


def test_a_tab_on_the_live_worker_leaves_busy_when_the_worker_writing_the_answer_dies(browser, tmp_path, screenshot):
    llm = ScriptedLLM()
    llm.default = lambda body: Reply(
        text=SLOW if last_user_text(body) == "tell me slowly" else f"answer to {last_user_text(body)}",
        chunk_delay=0.01,
    )
    llm.start()
    try:
        with redis_url(tmp_path / "redis") as url:
            env = {**model_env(llm.base_url), "REDIS_URL": url, "HERMES_REDIS_PREFIX": secrets.token_hex(4)}
            with start_daphne(tmp_path / "home", extra_env=env) as a, another_worker(a, extra_env=env) as b:
                on_a = _tab(browser, a, "/")
                session_id = on_a.get_attribute("#chat", "data-session")
                on_b = _tab(browser, b, f"/c/{session_id}/")
                on_b.wait_for_timeout(500)  # the sockets' introductions cross Redis
                send(on_a, "tell me slowly")
                expect(on_b.locator(".msg-assistant.streaming")).to_be_visible()
                expect(on_b.locator("#chat")).to_have_attribute("data-busy", "1")
                expect(on_b.locator("#send")).to_have_text("Queue")
                on_b.wait_for_timeout(1500)  # more than a checkpoint's worth of streaming
                os.kill(a.process.pid, signal.SIGKILL)
                a.process.wait()
                expect(on_b.locator(".msg-error")).to_contain_text(STOPPED, timeout=15_000)
                expect(on_b.locator("#chat")).to_have_attribute("data-busy", "0")
                expect(on_b.locator("#input")).to_be_enabled()
                screenshot("chat-worker-died", on_b)
                on_b.reload()
                on_b.wait_for_selector('#chat[data-connected="1"]')
                expect(on_b.locator(".msg-assistant .md").last).to_contain_text("part 0 of a long answer.")
                expect(on_b.locator(".turn-note.stopped")).to_contain_text(ENDINGS["interrupted"])  # then Continue
                send(on_b, "still there?")
                expect(on_b.locator(".msg-assistant .md").last).to_have_text("answer to still there?")
                assert "Traceback" not in b.log()
    finally:
        llm.stop()
