"""The chat on a phone (390×844) and a wide window (1280), light and dark: on the phone the
conversation has at least three quarters of the screen, the chat's own controls (model, export,
rename, delete, review counters) are in a menu behind "⋯", and what a finger presses is at least
44 px tall; an attached PDF shows in the person's message as a card (name, kind, pages) that opens
to its text, as soon as it is sent and after a reload. axe on each state."""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.attachment_files import text_pdf
from tests.browser.chat_helpers import send, wait_idle
from tests.browser.conftest import SCREENSHOTS
from tests.browser.test_a11y import blocking_violations
from tests.browser.test_chat_attachments import attach
from tests.browser.test_chat_list import mode_page  # noqa: F401 - the fixture, at each width and theme
from tests.browser.test_chat_versions import start_chat
from tests.fakellm import Reply, ScriptedLLM

pytestmark = pytest.mark.browser

TOUCH = 44
PHONE_SHARE = 0.75

# Every control shown inside `root` that is shorter than a fingertip.
SMALL_TARGETS_JS = """([root, least]) => {
  const out = [];
  for (const el of document.querySelectorAll(root)) {
    if (!el.checkVisibility({visibilityProperty: true})) continue;
    const r = el.getBoundingClientRect();
    if (r.width === 0) continue;
    if (r.height < least) out.push(`${Math.round(r.height)} px: ${el.outerHTML.slice(0, 100)}`);
  }
  return out;
}"""


def _small(page: Page, selector: str) -> list[str]:
    return list(page.evaluate(SMALL_TARGETS_JS, [selector, TOUCH]))


def _chat_with_answers(page: Page, llm: ScriptedLLM) -> None:
    start_chat(page)
    for n in range(1, 3):
        llm.push(Reply(text=f"Answer {n}: " + "a sentence about tuataras. " * 30))
        send(page, f"question {n} about tuataras")
        wait_idle(page, n)


def test_the_phone_gives_the_conversation_the_screen_and_fingertip_controls(mode_page, llm: ScriptedLLM) -> None:  # noqa: F811
    mode, width, page = mode_page
    _chat_with_answers(page, llm)
    problems = blocking_violations(page, f"chat at {mode}")
    if width > 800:
        # A wide window keeps every control in sight: Delete, the model and export row, and the review
        # counters' "Learning" disclosure.
        expect(page.locator("#chat-menu-toggle")).to_be_hidden()
        for shown in ("#chat-internals > summary", "#head-delete", "#model-input", "#export-md", "#chat-title button"):
            expect(page.locator(shown)).to_be_visible()
        assert not problems, "\n".join(problems)
        return
    viewport = page.viewport_size or {"height": 0}
    box = page.locator("#messages").bounding_box()
    assert box is not None
    share = box["height"] / viewport["height"]
    assert share >= PHONE_SHARE, f"the conversation has {box['height']:.0f} of {viewport['height']} px ({share:.0%})"
    # The chat's controls are folded away until asked for.
    for folded in ("#memory-counter", "#head-delete", "#model-input", "#export-md", "#menu-rename"):
        expect(page.locator(folded)).to_be_hidden()
    expect(page.locator("#chat-title-text")).to_be_visible()
    small = _small(page, ".topbar button, .chat-head button, #composer .composer-actions button, .attach-button")
    toggle = page.locator("#chat-menu-toggle")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    toggle.click()
    expect(toggle).to_have_attribute("aria-expanded", "true")
    menu = page.locator("#chat-menu")
    page.locator("#chat-internals > summary").click()  # the review counters, one level down
    for shown in ("#memory-counter", "#head-delete", "#model-input", "#export-md", "#export-json", "#menu-rename"):
        expect(menu.locator(shown)).to_be_in_viewport()
    expect(page.locator("#memory-counter")).to_contain_text("Memory review in")
    small += _small(page, "#chat-menu button, #chat-menu a, #chat-menu summary, #chat-menu input")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"phone-chat-menu-{mode}.png"))
    problems += blocking_violations(page, f"chat menu open at {mode}")
    page.keyboard.press("Escape")
    expect(toggle).to_have_attribute("aria-expanded", "false")
    expect(menu.locator("#head-delete")).to_be_hidden()
    expect(toggle).to_be_focused()
    # Rename from the menu: the menu closes and the title's field is there to type in.
    toggle.click()
    page.click("#menu-rename")
    expect(page.locator("#chat-title input[name=title]")).to_be_visible()
    expect(toggle).to_have_attribute("aria-expanded", "false")
    page.locator("#chat-title").get_by_role("button", name="Cancel").click()
    expect(page.locator("#chat-title-text")).to_be_visible()
    page.click("#nav-toggle")
    small += _small(page, "#main-nav a, #main-nav button")
    assert not small, "smaller than a fingertip:\n" + "\n".join(small)
    assert not problems, "\n".join(problems)


def test_an_attached_pdf_shows_as_a_card_that_opens_to_its_text(mode_page, llm: ScriptedLLM) -> None:  # noqa: F811
    mode, width, page = mode_page
    start_chat(page)
    attach(page, "survey.pdf", text_pdf(["The tuatara survey counted 97 tuataras", "Page two"]), "application/pdf")
    expect(page.locator("#attachments .attachment-name")).to_have_text("📎 survey.pdf (2 pages)")
    llm.push(Reply(text="It counts tuataras."))
    send(page, "summarise the survey")
    wait_idle(page, 1)
    problems: list[str] = []
    for moment in ("as sent", "after a reload"):
        bubble = page.locator("#messages .msg-user").last
        card = bubble.locator(".file-card")
        expect(card).to_have_count(1)
        expect(bubble.locator(".md > p").first).to_have_text("summarise the survey")
        summary = card.locator("summary")
        expect(summary.locator(".file-name")).to_have_text("survey.pdf")
        expect(summary.locator(".file-facts")).to_have_text("PDF · 2 pages")
        text = card.locator("pre")
        expect(text).to_be_hidden()  # the wall of text is folded away
        if width < 800:
            assert (summary.bounding_box() or {"height": 0})["height"] >= TOUCH
        summary.click()
        expect(text).to_be_visible()
        expect(text).to_contain_text("The tuatara survey counted 97 tuataras")
        problems += blocking_violations(page, f"PDF card {moment} at {mode}")
        if moment == "as sent":
            page.reload()
            page.wait_for_selector('#chat[data-connected="1"]')
    # What the model read is the whole text, as stored: the card changes only how it is shown.
    sent = [m for m in llm.chat_requests()[-1]["messages"] if m["role"] == "user"][-1]["content"]
    assert sent.startswith("summarise the survey\n\n📎 **survey.pdf** (2 pages)\n\n```")
    assert "The tuatara survey counted 97 tuataras" in sent
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"pdf-card-{mode}.png"))
    assert not problems, "\n".join(problems)
