"""The chat list as a person organises it, at 1280 and 390 px in light and dark: chats grouped by
date, pinned on top, archived out of the list (and back), tagged and filtered by tag, renamed and
deleted from each chat's menu; the header's "New chat", the drawer's backdrop and a quiet Delete."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Literal

import pytest
from playwright.sync_api import Browser, Dialog, Page, expect

from tests.browser.conftest import SCREENSHOTS, LiveServer
from tests.browser.site_pages import _server_python
from tests.browser.test_a11y import blocking_violations

pytestmark = pytest.mark.browser
Scheme = Literal["light", "dark"]

MODES: dict[str, tuple[Scheme, int, int]] = {
    "light-1280": ("light", 1280, 860),
    "dark-1280": ("dark", 1280, 860),
    "light-390": ("light", 390, 844),
    "dark-390": ("dark", 390, 844),
}

# Chats last used today, yesterday, 3, 20 and 70 days ago (the dates set as if they had been).
SEED = """
import datetime as dt
from django.utils import timezone
from knowledge.models import ChatSession, Message
now = timezone.now()
ids = []
for title, days in [("Today's {tag}", 0), ("Yesterday's {tag}", 1), ("Last week's {tag}", 3),
                    ("Last month's {tag}", 20), ("Old {tag}", 70)]:
    s = ChatSession.objects.create(title=title, title_source="person", system_prompt="You are Hermes.")
    Message.objects.create(session=s, role="user", content="hello " + title)
    ChatSession.objects.filter(pk=s.pk).update(updated_at=now - dt.timedelta(days=days), message_count=1)
    ids.append(s.pk)
print(",".join(ids))
"""


@pytest.fixture(params=list(MODES))
def mode_page(request, browser: Browser, daphne_server: LiveServer) -> Iterator[tuple[str, int, Page]]:
    scheme, width, height = MODES[request.param]
    ctx = browser.new_context(
        base_url=daphne_server.url, viewport={"width": width, "height": height}, color_scheme=scheme
    )
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(daphne_server.login_url("/"))
    page.wait_for_url(f"{daphne_server.url}/")
    yield request.param, width, page
    ctx.close()


def _seed(server: LiveServer, tag: str) -> list[str]:
    return _server_python(server, SEED.replace("{tag}", tag)).split(",")


def _settled(page: Page) -> None:
    """htmx has swapped the list and wired what it swapped in (a change made before that is lost)."""
    page.wait_for_function(
        "() => !document.querySelector('.htmx-request, .htmx-swapping, .htmx-settling, .htmx-added')"
    )


def _open_list(page: Page, width: int) -> None:
    if width < 800:
        page.click("#drawer-toggle")
        page.wait_for_function("() => document.getElementById('chat-sidebar').getBoundingClientRect().left >= 0")


def _menu(page: Page, chat_id: str, action: str) -> None:
    _settled(page)
    row = page.locator(f"#row-{chat_id}")
    row.locator("summary.session-menu-button").click()
    row.locator(f'[data-action="{action}"]').click()


def _row(page: Page, chat_id: str):
    return page.locator(f"#row-{chat_id}")


def _group_of(page: Page, chat_id: str) -> str:
    return str(
        page.evaluate(
            "id => document.getElementById('row-' + id).closest('.session-group').querySelector('h2').textContent",
            chat_id,
        )
    )


def test_chats_are_grouped_by_date_pinned_archived_and_tagged(mode_page, daphne_server: LiveServer) -> None:
    mode, width, page = mode_page
    tag = mode.replace("-", "")
    ids = _seed(daphne_server, tag)
    page.goto(f"/c/{ids[0]}/")
    _open_list(page, width)
    labels = page.locator("#session-list .session-group-label").all_text_contents()
    for label in ["Today", "Yesterday", "Previous 7 days", "Previous 30 days"]:
        assert label in labels
    assert [_group_of(page, i) for i in ids[:4]] == ["Today", "Yesterday", "Previous 7 days", "Previous 30 days"]
    assert _group_of(page, ids[4])[-4:].isdigit()  # "September 2026": a month of its own
    assert labels.index("Today") < labels.index("Yesterday") < labels.index("Previous 7 days")

    # Pin the old chat: it heads the list, in a group of its own, and stays there on reload.
    _menu(page, ids[4], "pin")
    expect(_row(page, ids[4]).locator(".pin-mark")).to_be_visible()
    assert _group_of(page, ids[4]) == "Pinned"
    assert page.locator("#session-list .session-group-label").first.text_content() == "Pinned"
    page.reload()
    _open_list(page, width)
    assert _group_of(page, ids[4]) == "Pinned"
    problems = blocking_violations(page, f"chat list ({mode})")
    _row(page, ids[0]).locator("summary.session-menu-button").click()
    expect(_row(page, ids[0]).locator('[data-action="delete"]')).to_be_visible()
    problems += blocking_violations(page, f"chat list with a menu open ({mode})")
    _row(page, ids[0]).locator("summary.session-menu-button").click()

    # Archive yesterday's chat: it leaves the list; the Archived view lists it and puts it back.
    _menu(page, ids[1], "archive")
    expect(_row(page, ids[1])).to_have_count(0)
    _settled(page)
    page.check("#list-archived")
    expect(page.locator("#archived-head")).to_be_visible()
    expect(_row(page, ids[1])).to_be_visible()
    expect(_row(page, ids[0])).to_have_count(0)
    problems += blocking_violations(page, f"archived view ({mode})")
    _menu(page, ids[1], "archive")  # "Unarchive"
    expect(_row(page, ids[1])).to_have_count(0)
    _settled(page)
    page.uncheck("#list-archived")
    expect(_row(page, ids[1])).to_be_visible()
    assert _group_of(page, ids[1]) == "Yesterday"  # organising a chat does not change when it was used

    # Tag two chats, filter by the tag, take it off again.
    for chat in (ids[2], ids[3]):
        _menu(page, chat, "tags")
        page.fill(f"#tag-add-{chat}", tag)
        page.press(f"#tag-add-{chat}", "Enter")
        expect(_row(page, chat).locator(".tag-name")).to_have_text(f"#{tag}")
        problems += blocking_violations(page, f"tag editor ({mode})")
        _row(page, chat).locator(".tag-done").click()
        expect(_row(page, chat).locator(".tag-chip")).to_have_text(f"#{tag}")
    _settled(page)
    page.select_option("#list-tag", tag)
    expect(page.locator("#session-list .session-row")).to_have_count(2)
    _menu(page, ids[3], "tags")
    _row(page, ids[3]).get_by_role("button", name=f"Remove tag {tag}").click()
    expect(_row(page, ids[3]).locator(".tag-list")).to_contain_text("No tags yet.")
    _row(page, ids[3]).locator(".tag-done").click()
    expect(page.locator("#session-list .session-row")).to_have_count(1)
    expect(page.locator(".session-list-head")).to_have_text(f"Chats tagged #{tag}")
    _settled(page)
    page.select_option("#list-tag", "")
    expect(page.locator(".session-list-head")).to_have_count(0)
    expect(_row(page, ids[3])).to_be_visible()
    if mode.startswith("dark"):
        page.screenshot(path=str(SCREENSHOTS / f"chat-list-{mode}.png"))
    assert not problems, "\n".join(problems)


def test_a_chat_is_renamed_and_deleted_from_its_menu(mode_page, daphne_server: LiveServer) -> None:
    mode, width, page = mode_page
    ids = _seed(daphne_server, "rename" + mode.replace("-", ""))
    page.goto(f"/c/{ids[0]}/")
    _open_list(page, width)

    # Rename the chat that is open: the list and the header both show the new title.
    _menu(page, ids[0], "rename")
    field = _row(page, ids[0]).locator('input[name="title"]')
    field.fill("   ")
    field.press("Enter")
    expect(_row(page, ids[0]).locator(".error")).to_contain_text("Give the chat a title")
    field = _row(page, ids[0]).locator('input[name="title"]')
    field.fill(f"Renamed in the list {mode}")
    field.press("Enter")
    expect(_row(page, ids[0]).locator(".session-title")).to_have_text(f"Renamed in the list {mode}")
    expect(page.locator("#chat-title-text")).to_have_text(f"Renamed in the list {mode}")

    # Delete another chat: refusing the question keeps it; accepting removes it, this page stays.
    page.once("dialog", lambda d: d.dismiss())
    _menu(page, ids[2], "delete")
    expect(_row(page, ids[2])).to_be_visible()
    asked: list[str] = []

    def accept(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.accept()

    page.once("dialog", accept)
    _row(page, ids[2]).locator('[data-action="delete"]').click()
    expect(_row(page, ids[2])).to_have_count(0)
    assert "cannot be undone" in asked[0]
    assert page.url.endswith(f"/c/{ids[0]}/")
    assert daphne_server.query("SELECT count(*) FROM knowledge_chatsession WHERE id = ?", ids[2])[0][0] == 0


def test_narrow_header_has_new_chat_a_backdrop_and_a_quiet_delete(mode_page, daphne_server: LiveServer) -> None:
    mode, width, page = mode_page
    ids = _seed(daphne_server, "head" + mode.replace("-", ""))
    page.goto(f"/c/{ids[0]}/")
    if width < 800:
        page.click("#chat-menu-toggle")  # on a phone Delete is in the chat's menu
    delete = page.locator("#head-delete")
    bad = page.evaluate("() => getComputedStyle(document.documentElement).getPropertyValue('--bad').trim()")
    colour = page.evaluate("() => getComputedStyle(document.getElementById('head-delete')).color")
    red = page.evaluate(
        "c => { const d = document.createElement('div'); d.style.color = c; document.body.append(d);"
        " const v = getComputedStyle(d).color; d.remove(); return v; }",
        bad,
    )
    assert colour != red  # red only when pointed at
    delete.hover()
    expect(delete).to_have_css("color", red)
    if width >= 800:
        expect(page.locator("#head-new-chat")).to_be_hidden()
        expect(page.locator("#new-chat")).to_be_visible()
        return
    page.keyboard.press("Escape")  # the chat's menu closes
    expect(page.locator("#head-new-chat")).to_be_visible()
    header = page.locator(".chat-head").bounding_box()
    assert header is not None and header["height"] < 130
    page.click("#drawer-toggle")
    expect(page.locator("#drawer-backdrop")).to_be_visible()
    page.screenshot(path=str(SCREENSHOTS / f"drawer-backdrop-{mode}.png"))
    page.mouse.click(width - 10, 600)  # on the backdrop, beside the drawer
    expect(page.locator("#drawer-backdrop")).to_be_hidden()
    expect(page.locator("#drawer-toggle")).to_have_attribute("aria-expanded", "false")
    page.click("#head-new-chat")
    page.wait_for_url(lambda url: f"/c/{ids[0]}/" not in url)
    assert page.locator("#chat").get_attribute("data-session") != ids[0]
