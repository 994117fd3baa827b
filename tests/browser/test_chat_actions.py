"""Message actions in a real browser: copy, the chat's model, export (edit and regenerate:
test_chat_versions.py). Each test does what a person would do and checks what they would see."""

from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from agent.chat.titles import TITLE_PROMPT
from tests.browser.chat_helpers import fresh_chat, send, wait_idle
from tests.fakellm import Reply, last_user_text

pytestmark = pytest.mark.browser

CODE = "if k < 1 && x > 2:\n    print('<done>')"


def answer_echo(llm) -> None:
    llm.default = lambda body: Reply(text=f"answer to {last_user_text(body)}")


def clipboard(page: Page) -> str:
    return str(page.evaluate("navigator.clipboard.readText()"))


def test_copy_puts_the_code_block_and_the_message_on_the_clipboard(page, context, llm, daphne_server):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=daphne_server.url)
    fresh_chat(page)
    answer = f"Try this:\n\n```python\n{CODE}\n```\n\nand `a < b` inline."
    llm.push(Reply(text=answer))
    send(page, "show me code")
    wait_idle(page, 1)
    code = page.locator(".msg-assistant pre")
    expect(code).to_have_text(CODE + "\n")  # shown as written: no &lt; or &amp; on screen
    expect(page.locator(".msg-assistant p code")).to_have_text("a < b")
    page.locator(".msg-assistant .code-copy").click()
    expect(page.locator(".msg-assistant .code-copy")).to_have_text("Copied")
    assert clipboard(page) == CODE + "\n"
    page.locator(".msg-assistant .msg-copy").click()
    assert clipboard(page) == answer
    page.reload()  # stored messages get the same buttons
    page.locator(".msg-user .msg-copy").click()
    assert clipboard(page) == "show me code"


def test_the_chat_uses_the_model_chosen_from_the_servers_list_or_typed(page, llm, daphne_server):
    llm.models = ["scripted-model", "bigger-model"]
    session_id = fresh_chat(page)
    expect(page.locator("#model-options option")).to_have_count(2)
    assert page.locator("#model-options option").evaluate_all("os => os.map(o => o.value)") == [
        "bigger-model",
        "scripted-model",
    ]
    page.fill("#model-input", "bigger-model")
    page.press("#model-input", "Enter")
    expect(page.locator("#model-state")).to_have_text("Next answers use bigger-model.")
    send(page, "which model are you?")
    wait_idle(page, 1)
    assert llm.requests[-1]["model"] == "bigger-model"
    page.reload()
    expect(page.locator("#model-input")).to_have_value("bigger-model")
    page.fill("#model-input", "my-own-model:7b")  # not listed: typed by hand
    page.press("#model-input", "Enter")
    expect(page.locator("#model-state")).to_have_text("Next answers use my-own-model:7b.")
    send(page, "and now?")
    wait_idle(page, 2)
    assert llm.requests[-1]["model"] == "my-own-model:7b"
    assert daphne_server.query("select model from knowledge_chatsession where id=?", session_id) == [
        ("my-own-model:7b",)
    ]


def test_a_server_that_lists_no_models_says_so_and_a_name_can_still_be_typed(page, llm):
    llm.models = None  # the scripted server answers /v1/models with 404
    fresh_chat(page)
    expect(page.locator("#model-state")).to_contain_text("did not list its models")
    page.fill("#model-input", "typed-model")
    page.press("#model-input", "Enter")
    expect(page.locator("#model-state")).to_have_text("Next answers use typed-model.")


def test_export_downloads_markdown_and_json_with_every_message(page, llm, daphne_server):
    answer_echo(llm)
    session_id = fresh_chat(page)
    questions = ["how do I list files?", "and hidden ones with `ls -a`?"]
    for i, question in enumerate(questions, start=1):
        send(page, question)
        wait_idle(page, i)
    stored = [
        content
        for (content,) in daphne_server.query(
            "select content from knowledge_message where session_id=? order by id", session_id
        )
    ]
    assert len(stored) == 4
    with page.expect_download() as md_download:
        page.click("#export-md")
    markdown = md_download.value.path().read_text(encoding="utf-8")
    assert md_download.value.suggested_filename.endswith(".md")
    for content in stored:
        assert content in markdown
    assert markdown.index(stored[0]) < markdown.index(stored[1]) < markdown.index(stored[3])
    with page.expect_download() as json_download:
        page.click("#export-json")
    data = json.loads(json_download.value.path().read_text(encoding="utf-8"))
    assert [m["content"] for m in data["messages"]] == stored
    assert [m["role"] for m in data["messages"]] == ["user", "assistant", "user", "assistant"]


def test_the_model_suggests_a_title_that_the_person_saves(page, llm, daphne_server):
    session_id = fresh_chat(page)
    llm.when(lambda body: body["messages"][0]["content"] == TITLE_PROMPT, Reply(text="Staging deploy checklist"))
    send(page, "how do I **deploy** to `staging`?")
    wait_idle(page, 1)
    expect(page.locator("#chat-title-text")).to_have_text("how do I deploy to staging?")  # plain words
    page.click("#chat-title button")
    page.click(".rename-form .suggest-title")
    expect(page.locator(".rename-form input[name=title]")).to_have_value("Staging deploy checklist")
    page.click(".rename-form button[type=submit]")
    expect(page.locator("#chat-title-text")).to_have_text("Staging deploy checklist")
    assert daphne_server.query("select title from knowledge_chatsession where id=?", session_id) == [
        ("Staging deploy checklist",)
    ]
