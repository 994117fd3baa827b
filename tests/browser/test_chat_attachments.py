"""PDFs and images attached in a real browser: a PDF's text is sent in the message and found by
search; an image shows as a thumbnail, reaches the scripted model as an image part and is there
after a reload; an edit keeps the question's image; a share link's page shows it; a model refusing
images says so inline and keeps the text; a file too big gets the stated limit. axe on the chat
page with attachments, at 1280 and 390 px."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect

from tests.attachment_files import blank_pdf, png, text_pdf
from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.browser.conftest import LiveServer
from tests.browser.test_a11y import blocking_violations
from tests.browser.test_chat_versions import start_chat
from tests.fakellm import Reply
from tests.wire.llamacpp import IMAGE_REFUSAL

pytestmark = pytest.mark.browser


def attach(page: Page, name: str, data: bytes, mime: str) -> None:
    page.set_input_files("#attach-input", files=[FilePayload(name=name, mimeType=mime, buffer=data)])


def _user_parts(body: dict[str, Any]) -> Any:
    return [m for m in body["messages"] if m["role"] == "user"][-1]["content"]


def test_an_attached_pdf_is_sent_as_its_text_and_found_by_search(page: Page, llm, daphne_server: LiveServer) -> None:
    fresh_chat(page)
    attach(page, "census.pdf", text_pdf(["The numbat census counted 412 numbats"]), "application/pdf")
    expect(page.locator("#attachments .attachment-name")).to_have_text("📎 census.pdf (1 page)")
    send(page, "summarise the census")
    wait_idle(page, 1)
    bubble = page.locator("#messages .msg-user").last
    expect(bubble.locator("pre")).to_contain_text("The numbat census counted 412 numbats")
    sent = _user_parts(llm.chat_requests()[-1])
    assert sent.startswith("summarise the census\n\n📎 **census.pdf** (1 page)\n\n```")
    assert "The numbat census counted 412 numbats" in sent
    page.goto("/search/?q=numbat&role=user")
    expect(page.locator(".search-hit")).to_have_count(1)


def test_an_attached_image_reaches_the_model_and_stays_after_a_reload(page: Page, llm, daphne_server) -> None:
    chat = fresh_chat(page)
    attach(page, "red.png", png(6, 4), "image/png")
    expect(page.locator("#attachments img.thumb")).to_have_attribute("alt", "red.png")
    send(page, "what colour is this?")
    wait_idle(page, 1)
    expect(page.locator("#attachments .attachment")).to_have_count(0)  # sent with the message
    parts = _user_parts(llm.chat_requests()[-1])
    assert parts[0] == {"type": "text", "text": "what colour is this?"}
    assert parts[1]["type"] == "image_url" and parts[1]["image_url"]["url"].startswith("data:image/png;base64,")
    page.reload()
    thumb = page.locator("#messages .msg-user .msg-images img")
    expect(thumb).to_have_attribute("alt", "red.png")
    page.wait_for_function("img => img.complete && img.naturalWidth === 6", arg=thumb.element_handle())
    assert daphne_server.query(
        "select a.name from knowledge_messageattachment a join knowledge_message m on m.id = a.message_id "
        "where m.session_id = ?",
        chat,
    ) == [("red.png",)]


def test_a_message_sent_while_its_image_uploads_waits_for_it(page: Page, llm, daphne_server) -> None:
    # A slow upload: Send says to wait and keeps the text, instead of sending without the image.
    fresh_chat(page)
    held: list[Any] = []
    page.route("**/chat/attach/", lambda route: held.append(route))
    attach(page, "slow.png", png(5, 5), "image/png")
    page.wait_for_function("() => document.querySelector('#attachments').getAttribute('aria-busy') === 'true'")
    send(page, "what is in the slow picture?")
    expect(page.locator("#chat-alert")).to_contain_text("An attachment is still uploading")
    expect(page.locator("#input")).to_have_value("what is in the slow picture?")
    expect(page.locator("#messages .msg-user")).to_have_count(0)
    held[0].continue_()
    expect(page.locator("#attachments img.thumb")).to_have_attribute("alt", "slow.png")
    page.press("#input", "Enter")
    wait_idle(page, 1)
    parts = _user_parts(llm.chat_requests()[-1])
    assert parts[0]["text"] == "what is in the slow picture?" and parts[1]["type"] == "image_url"


def loaded(page: Page, thumb: Any, width: int) -> None:
    page.wait_for_function(f"img => img.complete && img.naturalWidth === {width}", arg=thumb.element_handle())


def test_an_edited_question_keeps_its_image_and_the_share_page_shows_it(page: Page, llm, daphne_server) -> None:
    chat = fresh_chat(page)
    attach(page, "chart.png", png(9, 5), "image/png")
    expect(page.locator("#attachments img.thumb")).to_have_attribute("alt", "chart.png")  # uploaded
    send(page, "what does this chart show?")
    wait_idle(page, 1)
    page.locator(".msg-user").first.locator(".msg-edit").click()
    expect(page.locator(".edit-form")).to_contain_text("Its image goes with it.")
    page.locator(".edit-form textarea").fill("what does this chart show, in one line?")
    page.click(".edit-form button[type=submit]")
    expect(page.locator(".msg-user .versions .version-count")).to_have_text(["2/2"])
    wait_idle(page, 1)
    parts = _user_parts(llm.chat_requests()[-1])
    assert parts[0] == {"type": "text", "text": "what does this chart show, in one line?"}
    assert parts[1]["type"] == "image_url"
    loaded(page, page.locator("#messages .msg-user .msg-images img"), 9)
    page.locator(".msg-user .versions .version-prev").click()
    expect(page.locator("#messages .msg-user .md")).to_have_text("what does this chart show?")
    loaded(page, page.locator("#messages .msg-user .msg-images img"), 9)  # the earlier version keeps it too
    page.goto(f"/c/{chat}/share/")
    page.click("#share-create")
    page.goto(page.locator(".share-url").input_value())
    thumb = page.locator(".share-user .msg-images img")
    expect(thumb).to_have_attribute("alt", "chart.png")
    loaded(page, thumb, 9)


def test_a_model_refusing_images_says_so_inline_and_keeps_the_text(page: Page, llm, daphne_server) -> None:
    fresh_chat(page)
    model = f"text-only-{uuid.uuid4().hex[:8]}"  # its refusal is remembered for this name only
    page.fill("#model-input", model)
    page.press("#model-input", "Enter")
    expect(page.locator("#model-state")).to_have_text(f"Next answers use {model}.")
    llm.push(Reply(raw=IMAGE_REFUSAL))
    attach(page, "photo.png", png(), "image/png")
    expect(page.locator("#attachments img.thumb")).to_be_visible()
    send(page, "describe my holiday photo")
    error = page.locator("#messages .msg-error")
    expect(error).to_contain_text("This model does not accept images. Your message is kept")
    page.wait_for_selector('#chat[data-busy="0"]')
    expect(page.locator("#messages .msg-user .md").last).to_have_text("describe my holiday photo")
    page.reload()
    expect(page.locator("#messages .msg-user .md").last).to_have_text("describe my holiday photo")
    expect(page.locator("#messages .msg-user .msg-images img")).to_have_attribute("alt", "photo.png")
    attach(page, "again.png", png(), "image/png")  # now known: refused at once, before sending
    expect(page.locator("#chat-alert")).to_contain_text("again.png was not attached. This model does not accept images")


def test_files_that_cannot_be_attached_get_the_stated_reason_and_the_text_stays(page: Page, llm) -> None:
    fresh_chat(page)
    page.fill("#input", "my draft question")
    attach(page, "huge.png", png() + b"\0" * (5 * 1024 * 1024), "image/png")
    expect(page.locator("#chat-alert")).to_contain_text("huge.png is 5.0 MB; images are limited to 5.0 MB each")
    attach(page, "scan.pdf", blank_pdf(), "application/pdf")
    expect(page.locator("#chat-alert")).to_contain_text("no text to extract — it may be scanned images")
    expect(page.locator("#attachments .attachment")).to_have_count(0)
    expect(page.locator("#input")).to_have_value("my draft question")
    assert not llm.requests


@pytest.fixture(params=[(1280, 860), (390, 844)], ids=["1280", "390"])
def sized_page(request, browser: Browser, daphne_server: LiveServer) -> Iterator[Page]:
    width, height = request.param
    ctx = browser.new_context(base_url=daphne_server.url, viewport={"width": width, "height": height})
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(daphne_server.login_url("/"))
    yield page
    ctx.close()


def test_the_chat_with_attachments_has_no_serious_accessibility_violations(sized_page: Page, llm) -> None:
    page = sized_page
    start_chat(page)  # "New chat" is in the drawer at 390 px
    attach(page, "chart.png", png(8, 8), "image/png")
    attach(page, "notes.pdf", text_pdf(["Meeting notes"]), "application/pdf")
    expect(page.locator("#attachments .attachment")).to_have_count(2)
    width = page.viewport_size["width"] if page.viewport_size else 0
    problems = blocking_violations(page, f"composer with attachments at {width}")
    send(page, "see attached")
    wait_idle(page, 1)
    page.reload()
    expect(page.locator("#messages .msg-user .msg-images img")).to_be_visible()
    problems += blocking_violations(page, f"sent message with an image at {width}")
    assert not problems, "\n".join(problems)
