"""Versions in place, in a real browser: an edit or a regenerate stays in the same chat (one entry
in the sidebar, the same address) with ‹ 2/2 › on the message; choosing a version shows the
conversation that followed it; search finds a message once and opens its version; Continue
after Stop goes on in the same answer. At 1280 and 390 px, light and dark, with axe."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect

from agent.conversation import CONTINUE_PROMPT
from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.browser.conftest import LiveServer
from tests.browser.test_a11y import blocking_violations
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.browser

MODES: dict[str, tuple[Literal["light", "dark"], int, int]] = {
    "light-1280": ("light", 1280, 860),
    "dark-1280": ("dark", 1280, 860),
    "light-390": ("light", 390, 844),
    "dark-390": ("dark", 390, 844),
}


@pytest.fixture(params=list(MODES))
def mode_page(request, browser: Browser, daphne_server: LiveServer) -> Iterator[Page]:
    scheme, width, height = MODES[request.param]
    ctx: BrowserContext = browser.new_context(
        base_url=daphne_server.url, viewport={"width": width, "height": height}, color_scheme=scheme
    )
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(daphne_server.login_url("/"))
    page.wait_for_url(f"{daphne_server.url}/")
    yield page
    ctx.close()


def answer_echo(llm) -> None:
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")


def users(page: Page):
    return page.locator("#messages .msg-user .md")


def answers(page: Page):
    return page.locator("#messages .msg-assistant .md")


def sidebar_titles(page: Page, title: str):
    return page.locator("#session-list .session-title", has_text=title)


def start_chat(page: Page) -> str:
    """A new chat, as a person starts one at either width ("New chat" is in the drawer at 390 px)."""
    page.goto("/")
    if page.locator("#drawer-toggle").is_visible():
        page.click("#drawer-toggle")
    with page.expect_navigation():  # the chat page it lands on, not the one it leaves
        page.click("#new-chat")
    page.wait_for_selector('#chat[data-connected="1"]')
    return str(page.get_attribute("#chat", "data-session"))


def _edit_first(page: Page, text: str) -> None:
    page.locator(".msg-user").first.locator(".msg-edit").click()
    page.locator(".edit-form textarea").fill(text)
    page.click(".edit-form button[type=submit]")


def test_edit_and_regenerate_make_versions_in_place(mode_page: Page, llm, daphne_server) -> None:
    page = mode_page
    answer_echo(llm)
    chat = start_chat(page)
    chats = daphne_server.query("select count(*) from knowledge_chatsession")
    q1, q2 = f"first question {chat[:6]}", f"second question {chat[:6]}"
    send(page, q1)
    wait_idle(page, 1)
    send(page, q2)
    wait_idle(page, 2)
    _edit_first(page, f"{q1}, edited")
    expect(page.locator(".msg-user .versions .version-count")).to_have_text(["2/2"])
    expect(users(page)).to_have_text([f"{q1}, edited"])
    expect(answers(page)).to_have_text([f"answer to {q1}, edited"])
    assert page.url.endswith(f"/c/{chat}/")  # the same chat, at its own address
    assert daphne_server.query("select count(*) from knowledge_chatsession") == chats  # no copy of the chat
    # The model got only the edited version.
    assert [m["content"] for m in llm.chat_requests()[-1]["messages"][1:]] == [f"{q1}, edited"]
    # ‹: the earlier version and the conversation that followed it.
    page.locator(".msg-user .versions .version-prev").click()
    expect(users(page)).to_have_text([q1, q2])
    expect(answers(page)).to_have_text([f"answer to {q1}", f"answer to {q2}"])
    expect(page.locator(".msg-user .versions .version-count").first).to_have_text("1/2")
    problems = blocking_violations(page, "chat with versions")
    # Regenerate the last answer of this version: ‹ 2/2 › on the answer, the question asked once.
    llm.push(Reply(text="a better second answer"))
    page.locator(".msg-assistant .msg-regenerate").click()
    expect(page.locator(".msg-assistant .versions .version-count")).to_have_text(["2/2"])
    expect(answers(page)).to_have_text([f"answer to {q1}", "a better second answer"])
    expect(users(page)).to_have_text([q1, q2])
    sent = llm.chat_requests()[-1]["messages"]
    assert [m["content"] for m in sent[1:]] == [q1, f"answer to {q1}", q2]
    page.locator(".msg-assistant .versions .version-prev").click()
    expect(answers(page)).to_have_text([f"answer to {q1}", f"answer to {q2}"])
    # A new message continues the version shown; reloading keeps it.
    send(page, "third question")
    wait_idle(page, 3)
    sent = [m["content"] for m in llm.chat_requests()[-1]["messages"][1:]]
    assert sent == [q1, f"answer to {q1}", q2, f"answer to {q2}", "third question"]
    page.reload()
    expect(users(page)).to_have_text([q1, q2, "third question"])
    if page.locator("#drawer-toggle").is_visible():
        page.click("#drawer-toggle")
    expect(sidebar_titles(page, q1)).to_have_count(1)  # one chat in the list
    problems += blocking_violations(page, "chat after versions")
    assert not problems, "\n".join(problems)


def test_regenerate_right_after_an_answer_streamed_in(page: Page, llm) -> None:
    fresh_chat(page)
    llm.push(Reply(text="the first answer"), Reply(text="a better answer"))
    send(page, "what is best?")
    wait_idle(page, 1)
    page.click(".msg-assistant .msg-regenerate")
    expect(page.locator(".msg-assistant .versions .version-count")).to_have_text(["2/2"])
    expect(answers(page)).to_have_text(["a better answer"])
    expect(users(page)).to_have_text(["what is best?"])
    assert [m["content"] for m in llm.chat_requests()[-1]["messages"][1:]] == ["what is best?"]
    page.click(".msg-assistant .versions .version-prev")
    expect(answers(page)).to_have_text(["the first answer"])
    expect(page.locator(".msg-assistant .versions .version-next")).to_be_focused()


def test_search_finds_a_message_once_and_opens_its_version(page: Page, llm, daphne_server) -> None:
    answer_echo(llm)
    chat = fresh_chat(page)
    send(page, "walrus migration pattern")
    wait_idle(page, 1)
    send(page, "tell me about quokkas")
    wait_idle(page, 2)
    page.locator(".msg-user").nth(1).locator(".msg-edit").click()
    page.locator(".edit-form textarea").fill("tell me about wombats")
    page.click(".edit-form button[type=submit]")
    expect(page.locator(".msg-user .versions .version-count")).to_have_text(["2/2"])
    # The sidebar's search: one chat, not one per version.
    page.fill("#chat-search", "walrus")
    expect(page.locator("#session-list .session-link")).to_have_count(1)
    page.goto("/search/?q=walrus&role=user")
    expect(page.locator(".search-hit")).to_have_count(1)  # the question is stored once
    page.goto("/search/?q=quokkas&role=user")
    hit = page.locator(".search-hit")
    expect(hit).to_have_count(1)
    expect(hit.locator(".other-version")).to_have_text("another version")
    hit.locator(".search-hit-link").click()
    page.wait_for_url(f"**/c/{chat}/#m*")
    expect(users(page)).to_have_text(["walrus migration pattern", "tell me about quokkas"])
    expect(page.locator(".msg-user .versions .version-count").last).to_have_text("1/2")


def test_continue_after_stop_extends_the_same_answer(page: Page, llm, daphne_server) -> None:
    chat = fresh_chat(page)
    llm.push(Reply(text="one two three four five six seven", chunk_delay=1.5))
    send(page, "count slowly")
    expect(page.locator(".msg-assistant.streaming")).to_be_visible()
    page.click("#stop")
    expect(page.locator(".turn-note.stopped .msg-continue")).to_be_visible()
    answer_sql = "select content, finish_reason from knowledge_message where role='assistant' and session_id=?"
    partial = daphne_server.query(answer_sql, chat)[0][0]
    assert partial and partial != "one two three four five six seven"
    # Continue: the model gets the partial answer back and writes on; Stop works again meanwhile.
    llm.push(Reply(text=" and on and on and on", chunk_delay=1.5))
    page.click(".msg-continue")
    expect(page.locator("#stop")).to_be_visible()
    expect(page.locator(".msg-assistant .md")).to_contain_text(" and")
    page.click("#stop")
    expect(page.locator(".turn-note.stopped .msg-continue")).to_be_visible()
    sent = llm.chat_requests()[-1]["messages"]
    assert (sent[-2]["role"], sent[-2]["content"], sent[-1]["content"]) == ("assistant", partial, CONTINUE_PROMPT)
    llm.push(Reply(text=" to the end."))
    page.click(".msg-continue")
    expect(page.locator(".msg-assistant .md")).to_contain_text("to the end.")
    page.wait_for_selector('#chat[data-busy="0"]')
    expect(page.locator(".turn-note.stopped")).to_have_count(0)
    expect(page.locator(".msg-assistant")).to_have_count(1)  # one answer, extended in place
    stored = daphne_server.query(answer_sql, chat)
    assert len(stored) == 1 and stored[0][0].startswith(partial) and stored[0][0].endswith(" to the end.")
    assert stored[0][1] == "stop"
    expect(page.locator(".msg-assistant .md")).to_have_text(stored[0][0])
    page.reload()
    expect(page.locator(".msg-assistant .md")).to_have_text(stored[0][0])
    assert page.url.endswith(f"/c/{chat}/")
