"""One chat's own settings, the read-only page its share link opens and printing, and the settings page's model
key and Check button, at 1280 and 390 px in light and dark, with axe on each state."""

from __future__ import annotations

import stat

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer
from tests.browser.site_pages import _server_python
from tests.browser.test_a11y import blocking_violations
from tests.browser.test_chat_list import mode_page  # noqa: F401 - the fixture, at each width and theme
from tests.fakellm import Reply, ScriptedLLM

pytestmark = pytest.mark.browser

SEED = """
from knowledge.models import ChatSession, Message
s = ChatSession.objects.create(title="Printable {mode}", title_source="person", system_prompt="You are Hermes.")
Message.objects.create(session=s, role="user", content="How do I list files?")
Message.objects.create(session=s, role="assistant", content="Use `ls`:\\n\\n```sh\\nls -la /var/log\\n```")
ChatSession.objects.filter(pk=s.pk).update(message_count=2, user_turn_count=1)
print(s.pk)
"""


def _open_new_chat(page: Page, width: int) -> str:
    page.goto("/")
    page.click("#head-new-chat" if width < 800 else "#new-chat")
    page.wait_for_selector('#chat[data-connected="1"]')
    return str(page.get_attribute("#chat", "data-session"))


def _open_chat_menu(page: Page, width: int) -> None:
    """On a phone the chat's settings, export and share links are in the menu behind "⋯"."""
    if width < 800:
        page.click("#chat-menu-toggle")


def _save_settings(page: Page, instructions: str, temperature: str) -> None:
    page.fill("#chat-instructions", instructions)
    page.fill("#chat-temperature", temperature)
    page.click("#chat-settings-save")


def _ask(page: Page, llm: ScriptedLLM, text: str, answers: int) -> dict:
    llm.push(Reply(text=f"answer {answers}"))
    page.fill("#input", text)
    page.press("#input", "Enter")
    page.wait_for_selector('#chat[data-busy="0"]')
    expect(page.locator(".msg-assistant")).to_have_count(answers)
    return [r for r in llm.chat_requests() if r["messages"][-1].get("content") == text][-1]


def test_a_chats_instructions_and_temperature_reach_the_model(mode_page, llm: ScriptedLLM) -> None:  # noqa: F811
    mode, width, page = mode_page
    _open_new_chat(page, width)
    _open_chat_menu(page, width)
    page.click("#chat-settings > summary")
    _save_settings(page, "Answer like a pirate.", "3")
    expect(page.locator("#err-temperature")).to_contain_text("from 0 to 2")
    expect(page.locator("#chat-temperature")).to_have_value("3")  # what was typed stays
    problems = blocking_violations(page, f"chat settings with an error ({mode})")
    _save_settings(page, f"Answer like a pirate ({mode}).", "0.3")
    expect(page.locator("#chat-settings-saved")).to_be_visible()
    expect(page.locator("#chat-settings-custom")).to_be_visible()
    problems += blocking_violations(page, f"chat settings saved ({mode})")

    body = _ask(page, llm, f"hello {mode}", 1)
    assert body["temperature"] == 0.3
    system = body["messages"][0]
    assert system["role"] == "system" and system["content"].endswith(f"Answer like a pirate ({mode}).")
    assert system["content"].startswith(("You are", "#"))  # the built prompt stays first

    page.reload()  # kept with the chat
    page.wait_for_selector('#chat[data-connected="1"]')
    _open_chat_menu(page, width)
    page.click("#chat-settings > summary")
    expect(page.locator("#chat-temperature")).to_have_value("0.3")
    _save_settings(page, "", "")  # blank: the defaults again
    expect(page.locator("#chat-settings-saved")).to_be_visible()
    body = _ask(page, llm, f"again {mode}", 2)
    assert "temperature" not in body and "pirate" not in body["messages"][0]["content"]
    assert not problems, "\n".join(problems)


def test_a_chats_share_link_shows_it_read_only_and_prints_without_controls(
    mode_page,  # noqa: F811 - the imported fixture
    daphne_server: LiveServer,
) -> None:
    mode, width, page = mode_page
    chat = _server_python(daphne_server, SEED.replace("{mode}", mode))
    page.goto(f"/c/{chat}/")
    _open_chat_menu(page, width)
    page.click("#share-open")
    page.click("#share-create")
    page.goto(page.locator(".share-url").input_value())
    expect(page.locator("#share-title")).to_have_text(f"Printable {mode}")
    expect(page.locator(".share-user")).to_contain_text("How do I list files?")
    expect(page.locator(".share-assistant pre")).to_contain_text("ls -la /var/log")
    for control in ("textarea", "#composer", "#chat-sidebar", ".msg-actions", "#chat-settings"):
        expect(page.locator(control)).to_have_count(0)
    overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0
    problems = blocking_violations(page, f"share page ({mode})")

    page.emulate_media(media="print")
    expect(page.locator("#share-print")).to_be_hidden()
    expect(page.locator(".topbar")).to_be_hidden()
    expect(page.locator(".share-assistant")).to_be_visible()
    page.goto(f"/c/{chat}/")
    page.wait_for_selector(".msg-assistant")
    for hidden in (".topbar", "#chat-sidebar", "#composer", "#send", "#head-delete", ".chat-tools", "#chat-settings"):
        expect(page.locator(hidden).first).to_be_hidden()
    expect(page.locator(".msg-user")).to_be_visible()
    expect(page.locator(".msg-assistant pre")).to_be_visible()
    assert page.locator("button:visible").count() == 0
    assert not problems, "\n".join(problems)


def test_settings_save_the_model_key_privately_and_check_the_server(
    mode_page,  # noqa: F811
    daphne_server: LiveServer,
    llm: ScriptedLLM,
) -> None:
    mode, width, page = mode_page
    page.goto("/settings/")
    # The browser tests' server has OPENAI_API_KEY set: the environment's key is the one in use.
    expect(page.locator("#key-in-use")).to_contain_text("from $OPENAI_API_KEY")
    page.fill("#conn-key", "sk has spaces")
    page.click("#connection-save")
    expect(page.locator("#conn-err-key")).to_contain_text("without spaces")
    problems = blocking_violations(page, f"settings with a key error ({mode})")

    secret = f"sk-live-{mode}-abcdef9876"
    page.fill("#conn-key", secret)
    page.click("#connection-save")
    expect(page.locator("#connection-saved")).to_contain_text("Saved to")
    expect(page.locator("#key-in-use")).to_contain_text("A key saved here (ending …9876) is used only without it.")
    expect(page.locator("#conn-key")).to_have_value("")
    page.reload()
    assert secret not in page.content()  # never shown back in full
    expect(page.locator("#connection-saved")).to_have_count(0)  # the banner follows a save only
    key_file = daphne_server.home / "api_key"
    assert key_file.read_text(encoding="utf-8").strip() == secret
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600

    page.click("#connection-check")
    expect(page.locator("#model-check")).to_contain_text("Connected")
    expect(page.locator('#model-check [data-step="chat"]')).to_contain_text("Plain chat: yes")
    problems += blocking_violations(page, f"settings with the check's result ({mode})")

    page.once("dialog", lambda d: d.accept())
    page.click("#connection-remove-key")
    expect(page.locator("#connection-remove-key")).to_have_count(0)
    assert not key_file.exists()
    assert not problems, "\n".join(problems)
