"""The model names a chat after its first answer (chat.auto_title): the person sees the new
title in the chat list and the header without reloading, and a title they gave stays."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from agent.chat.titles import TITLE_PROMPT
from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.browser.conftest import BROWSER_CONFIG, SCREENSHOTS
from tests.daphne import Daphne, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM

pytestmark = pytest.mark.browser


def is_title_request(body: dict[str, Any]) -> bool:
    return (body.get("messages") or [{}])[0].get("content") == TITLE_PROMPT


@pytest.fixture(scope="module")
def titling_server(tmp_path_factory: pytest.TempPathFactory, llm_server: ScriptedLLM) -> Iterator[Daphne]:
    """A dashboard whose config turns the automatic title on (the shared one leaves it off)."""
    home = tmp_path_factory.mktemp("titles-home")
    config = BROWSER_CONFIG + "chat:\n  auto_title: true\n"
    with start_daphne(home, config, model_env(llm_server.base_url)) as server:
        yield server


@pytest.fixture
def titled_page(browser: Browser, titling_server: Daphne) -> Iterator[Page]:
    ctx: BrowserContext = browser.new_context(base_url=titling_server.url, viewport={"width": 1280, "height": 860})
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(titling_server.login_url("/"))
    page.wait_for_url(f"{titling_server.url}/")
    yield page
    ctx.close()


def test_the_models_title_appears_in_the_chat_list_without_reloading(titled_page, llm, titling_server):
    page = titled_page
    release = threading.Event()

    def title(body: dict[str, Any]) -> Reply:
        release.wait(30)  # the title lands after the person has seen the answer
        return Reply(text="Debian image sizes")

    llm.when(is_title_request, title)
    session_id = fresh_chat(page)
    page.evaluate("window.__sameDocument = true")
    send(page, "how big are **debian** images?")
    wait_idle(page, 1)
    current = page.locator("#session-list .session-link.current .session-title")
    expect(current).to_have_text("how big are debian images?")  # first the message, in plain words
    release.set()
    expect(current).to_have_text("Debian image sizes")
    expect(page.locator("#chat-title-text")).to_have_text("Debian image sizes")
    assert page.title().startswith("Debian image sizes")
    assert page.evaluate("window.__sameDocument") is True  # no reload happened
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(Path(SCREENSHOTS) / "chat-auto-title.png"))
    assert titling_server.query("SELECT title, title_source FROM knowledge_chatsession WHERE id=?", session_id) == [
        ("Debian image sizes", "model")
    ]

    # A later exchange asks no title again, and keeps the model's title on the page.
    send(page, "and alpine?")
    wait_idle(page, 2)
    expect(page.locator("#chat-title-text")).to_have_text("Debian image sizes")
    expect(current).to_have_text("Debian image sizes")
    assert len([b for b in llm.chat_requests() if is_title_request(b)]) == 1


def test_a_chat_the_person_renamed_keeps_their_title(titled_page, llm, titling_server):
    page = titled_page
    llm.when(is_title_request, Reply(text="Model title"))
    session_id = fresh_chat(page)
    page.click("#chat-title button")  # Rename
    page.fill("input[name=title]", "My deploy notes")
    page.press("input[name=title]", "Enter")
    expect(page.locator("#chat-title-text")).to_have_text("My deploy notes")
    send(page, "how do I deploy?")
    wait_idle(page, 1)
    expect(page.locator("#session-list .session-link.current .session-title")).to_have_text("My deploy notes")
    assert [b for b in llm.chat_requests() if is_title_request(b)] == []
    assert titling_server.query("SELECT title FROM knowledge_chatsession WHERE id=?", session_id) == [
        ("My deploy notes",)
    ]
