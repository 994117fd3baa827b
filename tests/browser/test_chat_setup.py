"""A chat tried before a model is set up answers once the model is set up, without a restart."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.chat_helpers import send
from tests.browser.conftest import BROWSER_CONFIG
from tests.daphne import Daphne, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def unset_server(tmp_path_factory: pytest.TempPathFactory, llm_server: ScriptedLLM) -> Iterator[Daphne]:
    """A fresh home with no model configured anywhere (no config key, no environment)."""
    home = tmp_path_factory.mktemp("no-model-home")
    with start_daphne(home, BROWSER_CONFIG, {"SCRIPTED_KEY": "test-key"}) as server:
        yield server


@pytest.fixture
def unset_page(browser: Browser, unset_server: Daphne) -> Iterator[Page]:
    ctx = browser.new_context(base_url=unset_server.url, viewport={"width": 1280, "height": 860})
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(unset_server.login_url("/"))
    yield page
    ctx.close()


def test_a_chat_tried_before_setup_answers_after_setup(unset_page, llm):
    page = unset_page
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    page.wait_for_selector('#chat[data-connected="1"]')
    send(page, "hello")
    expect(page.locator(".msg-error")).to_contain_text("No model is configured")
    chat_url = page.url
    panel = page.locator("#setup-panel")
    panel.locator('input[name="base_url"]').fill(llm.base_url)
    panel.locator('input[name="model"]').fill("scripted-model")
    panel.locator('input[name="api_key_env"]').fill("SCRIPTED_KEY")
    panel.get_by_role("button", name="Save to config.yaml").click()
    expect(page.locator("#setup-panel")).to_contain_text("Saved")
    page.reload()
    assert page.url == chat_url
    page.wait_for_selector('#chat[data-connected="1"]')
    send(page, "hello again")
    expect(page.locator(".msg-assistant .md").last).to_have_text("answer to hello again")
