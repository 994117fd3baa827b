"""The chat in a real browser against daphne and the scripted model server."""

from __future__ import annotations

import re
import time

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.browser

REVIEW_PROMPT = "Review the conversation above"


def test_answer_streams_token_by_token_and_reload_shows_the_conversation(page, llm, daphne_server, screenshot):
    session_id = fresh_chat(page)
    llm.push(Reply(text="Here is a streamed answer: " + "word " * 40 + "and **the end**.", chunk_delay=0.03))
    send(page, "hello there")
    streaming = page.locator(".msg-assistant.streaming .md")
    streaming.wait_for()
    # Words shown so far, not characters: when a paragraph completes it is shown rendered, and
    # its trailing space (or the asterisks of **bold**) go, while no word ever leaves.
    words: list[int] = []
    while page.locator(".msg-assistant.streaming").count():
        try:
            words.append(streaming.inner_text(timeout=500).count("word"))
        except PlaywrightTimeout:  # the block stopped streaming between count() and inner_text()
            break
        time.sleep(0.05)
    assert len(set(words)) >= 3 and words == sorted(words), words  # it grew in steps
    wait_idle(page, 1)
    expect(page.locator(".msg-assistant strong")).to_have_text("the end")
    expect(page.locator(".msg-user .md")).to_have_text("hello there")
    expect(page.locator("#chat-title-text")).to_have_text("hello there")  # titled by the first message
    screenshot("chat", page)
    page.reload()
    expect(page.locator(".msg-user .md")).to_have_text("hello there")
    expect(page.locator(".msg-assistant strong")).to_have_text("the end")
    assert daphne_server.query("select role from knowledge_message where session_id=? order by id", session_id) == [
        ("user",),
        ("assistant",),
    ]


def test_tool_call_shows_a_card_with_its_result(page, llm, daphne_server, screenshot):
    fresh_chat(page)
    fact = "The user prefers metric units"
    llm.push(
        Reply(tool_calls=[{"name": "memory", "arguments": {"target": "user", "action": "add", "content": fact}}]),
        Reply(text="Noted: metric it is."),
    )
    send(page, "I use metric units, remember that")
    card = page.locator(".tool-card")
    expect(card.locator(".tool-status")).to_have_text("ok")
    expect(card.locator(".tool-name")).to_have_text("memory")
    card.locator("summary").click()
    expect(card.locator(".tool-result")).to_contain_text("User profile updated")
    expect(card.locator(".tool-args")).to_contain_text(fact)
    expect(card.locator(".tool-duration")).to_have_text(re.compile(r"\d+\.\d\d s"))
    wait_idle(page, 1)
    screenshot("tool-card", page)
    assert fact in (daphne_server.home / "memories" / "USER.md").read_text()
    page.reload()
    expect(page.locator(".tool-card .tool-name")).to_have_text("memory")
    expect(page.locator(".tool-card .tool-result")).to_contain_text("User profile updated")


def test_stop_interrupts_a_slow_answer_and_the_next_message_works(page, llm):
    fresh_chat(page)
    llm.push(Reply(text="slow " * 300, chunk_delay=0.05))
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    send(page, "write a lot")
    page.locator(".msg-assistant.streaming").wait_for()
    expect(page.locator("#send")).to_have_text("Queue")  # while it streams, Send queues
    page.click("#stop")
    expect(page.locator(".turn-note.stopped")).to_be_visible()
    expect(page.locator("#input")).to_be_enabled()
    send(page, "now something short")
    expect(page.locator(".msg-assistant .md").last).to_have_text("answer to now something short")


def test_a_message_sent_right_after_stop_survives_a_slow_refresh(page, llm):
    # After Stop the page fetches the stored conversation (for the stopped answer's Continue
    # button). On a slow network that fetch lands late; a message sent before it must not be
    # wiped out by the older conversation it carries, so the input waits for it.
    fresh_chat(page)
    held: list = []
    page.route(re.compile(r"/messages/"), lambda route: held.append(route))
    llm.push(Reply(text="slow " * 300, chunk_delay=0.05))
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    send(page, "write a lot")
    page.locator(".msg-assistant.streaming").wait_for()
    page.click("#stop")
    expect(page.locator(".turn-note.stopped")).to_be_visible()
    deadline = time.monotonic() + 10
    while not held and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert held, "the page did not fetch the stored conversation after Stop"
    expect(page.locator("#send")).to_have_text("Queue")  # a message waits until the conversation is back
    held[0].continue_()
    expect(page.locator("#send")).to_have_text("Send")
    expect(page.locator(".msg-continue")).to_be_visible()
    send(page, "now something short")
    wait_idle(page, answers=2)
    expect(page.locator(".msg-assistant .md").last).to_have_text("answer to now something short")
    expect(page.locator(".msg-user")).to_have_count(2)


def test_tenth_turn_review_toast_reaches_two_tabs_after_the_answer(page, context, llm, daphne_server, screenshot):
    session_id = fresh_chat(page)
    llm.when(
        lambda body: REVIEW_PROMPT in last_user_text(body) and body["messages"][-1]["role"] == "user",
        Reply(
            tool_calls=[
                {
                    "name": "memory",
                    "arguments": {
                        "target": "user",
                        "action": "add",
                        "content": "Lives in Lyon",
                        "evidence": ["I live in Lyon"],
                    },
                }
            ]
        ),
        times=1,
    )
    llm.default = lambda body: Reply(
        text="done" if body["messages"][-1]["role"] == "tool" else f"answer to {last_user_text(body)}"
    )
    other = context.new_page()
    other.goto(f"/c/{session_id}/")
    other.wait_for_selector('body[data-notify="open"]')
    page.wait_for_selector('body[data-notify="open"]')
    for i in range(1, 10):
        send(page, f"turn {i}")
        wait_idle(page, i)
    expect(page.locator("#memory-counter")).to_have_text("Memory review in 1 turn")
    send(page, "turn 10, I live in Lyon")
    toast = page.locator(".toast", has_text="💾 1 saved")
    expect(toast).to_be_visible(timeout=8000)
    # The answer it followed was on the page before the toast.
    expect(page.locator(".msg-assistant")).to_have_count(10)
    expect(page.locator(".msg-assistant .md").last).to_have_text("answer to turn 10, I live in Lyon")
    saved = toast.get_by_role("link", name="1 saved")
    assert saved.get_attribute("href") == "/memory/" and saved.get_attribute("title") == "User profile updated"
    expect(other.locator(".toast", has_text="💾 1 saved")).to_be_visible(timeout=8000)
    expect(page.locator("#memory-counter")).to_have_text("Memory review in 10 turns")
    screenshot("toast", page)
    assert daphne_server.query("select summary from knowledge_reviewrun where session_id=?", session_id) == [
        ("User profile updated",)
    ]


def test_model_error_shows_inline_keeps_the_text_and_retry_works(page, llm, daphne_server):
    session_id = fresh_chat(page)
    llm.push(Reply(status=500, error_message="upstream exploded"))
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")
    text = "please keep this text safe"
    send(page, text)
    error = page.locator(".msg-error")
    expect(error).to_be_visible()
    expect(page.locator("#input")).to_have_value(text)  # nothing typed is lost
    expect(page.locator("#input")).to_be_enabled()
    error.locator("button.retry").click()
    expect(page.locator(".msg-assistant .md").last).to_have_text(f"answer to {text}")
    expect(page.locator(".msg-error")).to_have_count(0)
    stored = daphne_server.query(
        "select content from knowledge_message where session_id=? and role='user' order by id", session_id
    )
    assert stored and all(row == (text,) for row in stored)


def test_slash_command_picks_and_invokes_a_skill(page, llm, daphne_server):
    marker = "UNIQUE-SKILL-BODY-7731"
    daphne_server.write_skill("deploy-check", "Check a deployment step by step", f"# Deploy check\n\n1. {marker}")
    session_id = fresh_chat(page)
    page.fill("#input", "")
    page.type("#input", "/dep")
    option = page.locator("#slash-menu .slash-option")
    expect(option).to_have_count(1)
    expect(option.locator(".slash-name")).to_have_text("/deploy-check")
    expect(option.locator(".slash-desc")).to_have_text("Check a deployment step by step")
    page.press("#input", "Enter")
    expect(page.locator("#input")).to_have_value("/deploy-check ")
    expect(page.locator("#slash-menu")).to_be_hidden()
    page.type("#input", "the staging server")
    page.press("#input", "Enter")
    wait_idle(page, 1)
    original = "/deploy-check the staging server"
    sent = last_user_text(llm.requests[-1])
    assert marker in sent and "the staging server" in sent
    expect(page.locator(".msg-user .md")).to_have_text(original)
    page.reload()
    expect(page.locator(".msg-user .md")).to_have_text(original)
    assert daphne_server.query(
        "select content from knowledge_message where session_id=? and role='user'", session_id
    ) == [(original,)]


def test_a_second_tab_on_the_same_chat_follows_the_answer_live(page, context, llm, daphne_server, screenshot):
    session_id = fresh_chat(page)
    other = context.new_page()
    other.goto(f"/c/{session_id}/")
    other.wait_for_selector('#chat[data-connected="1"]')
    llm.push(Reply(text="Seen in **both** tabs. " + "more " * 30, chunk_delay=0.03))
    send(page, "asked in the first tab")
    # The second tab shows the question and the answer streaming, and queues its own message meanwhile.
    expect(other.locator(".msg-user .md")).to_have_text("asked in the first tab")
    other.locator(".msg-assistant.streaming").wait_for()
    expect(other.locator("#send")).to_have_text("Queue")
    wait_idle(other, 1)
    expect(other.locator(".msg-assistant strong")).to_have_text("both")
    expect(other.locator("#input")).to_be_enabled()
    wait_idle(page, 1)
    screenshot("chat-second-tab", other)
    other.close()
