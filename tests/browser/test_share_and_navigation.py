"""Sharing a chat by a read-only link, the grouped navigation and its keyboard paths, links that land
on a message wherever it is, and status lines that appear only after an action: at 1280 and 390 px,
light and dark, with axe on each state.

The chats here write about echidnas, a word no other browser test searches for."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import SCREENSHOTS, LiveServer
from tests.browser.site_pages import _server_python
from tests.browser.test_a11y import blocking_violations
from tests.browser.test_chat_list import (
    MODES,
    mode_page,  # noqa: F401 - the fixture, at each width and theme
)

pytestmark = pytest.mark.browser

CHAT = """
from knowledge.models import ChatSession, Message
s = ChatSession.objects.create(title="Echidna notes {mode}", title_source="person", system_prompt="You are Hermes.")
q = Message.objects.create(session=s, role="user", content="How many echidnas were counted?")
a = Message.objects.create(session=s, role="assistant", content="Twelve echidnas:\\n\\n```sh\\ngrep echidna survey.log\\n```", parent=q)
ChatSession.objects.filter(pk=s.pk).update(message_count=2, user_turn_count=1, leaf_id=a.pk)
print(s.pk)
"""

# A long chat whose last turn has two versions of its answer (the first shown), a tool call without
# text of its own, and a change in the history that points at the version not shown.
VERSIONS = """
from knowledge import changelog
from knowledge.models import ChatSession, Message
from knowledge.provenance import Provenance
s = ChatSession.objects.create(title="Echidna burrows {mode}", title_source="person", system_prompt="")
parent = None
for i in range(25):
    parent = Message.objects.create(session=s, role="user", content=f"echidna question {i}", parent=parent)
    parent = Message.objects.create(session=s, role="assistant", content=f"echidna answer {i}\\n\\n" + "filler line. " * 40, parent=parent)
tool = Message.objects.create(session=s, role="assistant", content="", parent=parent,
    tool_calls=[{"id": "c1", "type": "function", "function": {"name": "memory", "arguments": "{}"}}])
result = Message.objects.create(session=s, role="tool", content="ok", tool_call_id="c1", parent=tool)
shown = Message.objects.create(session=s, role="assistant", content="The burrow is shallow.", parent=result)
other = Message.objects.create(session=s, role="assistant", content="The burrow is deep (other version).", parent=result)
ChatSession.objects.filter(pk=s.pk).update(leaf_id=shown.pk)
change = changelog.record(kind="memory", target="memory", action="add", before="", after="echidna burrows are deep",
    summary="echidna burrows {mode}", prov=Provenance(actor="user", session_id=s.pk, message_id=other.pk))
print(s.pk, shown.pk, other.pk, result.pk, tool.pk)
"""


def _menu(page: Page, width: int) -> None:
    """On a phone the chat's controls are in the menu behind "⋯"."""
    if width < 800:
        page.click("#chat-menu-toggle")


def _fits(page: Page) -> None:
    overflow = page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"scrolls sideways by {overflow} px"


def test_a_share_link_is_made_copied_read_without_the_login_and_revoked(
    mode_page,  # noqa: F811
    browser: Browser,
    daphne_server: LiveServer,
) -> None:
    mode, width, page = mode_page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    chat = _server_python(daphne_server, CHAT.replace("{mode}", mode))
    page.goto(f"/c/{chat}/")
    _menu(page, width)
    page.click("#share-open")
    expect(page.locator("#share-none")).to_have_text("This chat is not shared: no link shows it.")
    problems = blocking_violations(page, f"share panel, no link ({mode})")

    page.select_option("#share-expires", "7")
    page.click("#share-create")
    expect(page.locator("#share-created")).to_be_visible()
    url = page.locator(".share-url").input_value()
    assert re.fullmatch(rf"{re.escape(daphne_server.url)}/s/[A-Za-z0-9_-]{{43}}/", url), url
    expect(page.locator(".share-expiry")).to_contain_text("until ")
    page.locator(".share-copy").click()
    expect(page.locator("#share-copied")).to_have_text("Link copied.")
    assert page.evaluate("() => navigator.clipboard.readText()") == url
    _fits(page)
    problems += blocking_violations(page, f"share panel with a link ({mode})")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"share-panel-{mode}.png"))

    scheme, _, height = MODES[mode]
    reader = browser.new_context(viewport={"width": width, "height": height}, color_scheme=scheme)  # no login
    try:
        shared = reader.new_page()
        response = shared.goto(url)
        assert response is not None and response.status == 200
        assert response.headers["x-robots-tag"] == "noindex, nofollow, noarchive"
        assert "script-src 'self'" in response.headers["content-security-policy"]
        expect(shared.locator('meta[name="robots"]')).to_have_attribute("content", "noindex, nofollow, noarchive")
        expect(shared.locator("#share-title")).to_have_text(f"Echidna notes {mode}")
        expect(shared.locator(".share-user")).to_contain_text("How many echidnas were counted?")
        expect(shared.locator(".share-assistant pre")).to_contain_text("grep echidna survey.log")
        expect(shared.locator(".share-facts")).to_contain_text("this link works until")
        for dashboard in ("nav", "form", "textarea", "#chat-sidebar", "#composer", ".topbar"):
            expect(shared.locator(dashboard)).to_have_count(0)
        _fits(shared)
        problems += blocking_violations(shared, f"shared chat for a reader ({mode})")
        shared.screenshot(path=str(SCREENSHOTS / f"share-public-{mode}.png"))
        shared.goto(f"{daphne_server.url}/c/{chat}/")  # the chat itself still wants the login
        assert shared.url.startswith(f"{daphne_server.url}/login")

        page.once("dialog", lambda d: d.accept())
        page.get_by_role("button", name="Revoke").click()
        expect(page.locator("#share-revoked")).to_be_visible()
        expect(page.locator("#share-none")).to_be_visible()
        gone = shared.goto(url)
        assert gone is not None and gone.status == 404
        expect(shared.get_by_role("heading", name="This link does not work")).to_be_visible()
        expect(shared.locator("body")).not_to_contain_text("echidna")
        problems += blocking_violations(shared, f"revoked link ({mode})")
    finally:
        reader.close()
    assert not problems, "\n".join(problems)


def test_the_navigation_is_grouped_and_the_chat_page_keeps_internals_one_level_down(
    mode_page,  # noqa: F811
    daphne_server: LiveServer,
) -> None:
    mode, width, page = mode_page
    _server_python(daphne_server, CHAT.replace("{mode}", mode))  # the list has more than one chat
    page.goto("/memory/")
    if page.locator("#nav-toggle").is_visible():
        page.click("#nav-toggle")
    nav = page.get_by_role("navigation", name="Main")
    learned = nav.get_by_role("group", name="Learned")
    for name in ("Overview", "Memory", "Skills", "Inbox"):
        expect(learned.get_by_role("link", name=name, exact=True)).to_be_visible()
    history = nav.get_by_role("group", name="History")
    for name in ("Search", "Changes", "Reviews"):
        expect(history.get_by_role("link", name=name, exact=True)).to_be_visible()
    expect(nav.get_by_role("link", name="Settings", exact=True)).to_be_visible()
    expect(nav.get_by_role("link", name="Admin")).to_have_count(0)
    expect(page.locator(".topbar")).not_to_contain_text("{#")  # a template comment never shows
    if width >= 1280:
        box = page.locator(".topbar").bounding_box()
        assert box is not None and box["height"] < 60, f"the top bar wraps: {box}"
    expect(nav.get_by_role("link", name="Memory", exact=True)).to_have_attribute("aria-current", "page")
    problems = blocking_violations(page, f"navigation ({mode})")
    page.screenshot(path=str(SCREENSHOTS / f"nav-{mode}.png"))
    nav.get_by_role("link", name="Settings", exact=True).click()
    more = page.locator("#settings-more")
    expect(more.get_by_role("link", name="Admin")).to_be_visible()
    expect(more.get_by_role("link", name="Import and export")).to_be_visible()

    # The chat page: the review counters are behind "Learning", not above the conversation.
    page.goto("/")
    page.wait_for_selector('#chat[data-connected="1"]')
    _menu(page, width)
    expect(page.locator("#memory-counter")).to_be_hidden()
    page.locator("#chat-internals > summary").click()
    expect(page.locator("#memory-counter")).to_contain_text("Memory review in")
    problems += blocking_violations(page, f"chat with the counters open ({mode})")
    assert not problems, "\n".join(problems)


def test_skip_to_content_reaches_the_conversation_and_each_chat_is_one_tab_stop(
    mode_page,  # noqa: F811
    daphne_server: LiveServer,
) -> None:
    mode, width, page = mode_page
    for n in range(2):
        _server_python(daphne_server, CHAT.replace("{mode}", f"{mode} {n}"))
    chat = _server_python(daphne_server, CHAT.replace("{mode}", mode))
    page.goto(f"/c/{chat}/")
    page.wait_for_selector('#chat[data-connected="1"]')
    # The page puts the cursor in the message box; the skip link is the page's first stop (as on every page).
    first_stop = page.evaluate(
        "() => [...document.querySelectorAll('a[href], button, input, textarea, select, summary, [tabindex]')]"
        ".find(el => el.tabIndex >= 0).className"
    )
    assert first_stop == "skip-link"
    skip = page.get_by_role("link", name="Skip to content")
    expect(skip).to_have_attribute("href", "#messages")
    skip.focus()
    page.keyboard.press("Enter")
    expect(page.get_by_role("region", name="Messages")).to_be_focused()

    if width < 800:
        page.click("#drawer-toggle")
    rows = page.locator("#session-list .session-row")
    count = rows.count()
    assert count >= 3
    # Every Tab stop inside the list's rows: one per chat.
    stops = page.evaluate(
        """() => [...document.querySelectorAll('#session-list .session-row :is(a[href], button, summary, input, select)')]
            .filter(el => el.tabIndex >= 0 && el.checkVisibility()).map(el => el.className)"""
    )
    assert len(stops) == count and all(cls.startswith("session-link") for cls in stops), stops
    first = rows.nth(0).locator(".session-link")
    first.focus()
    page.keyboard.press("ArrowDown")
    expect(rows.nth(1).locator(".session-link")).to_be_focused()
    page.keyboard.press("ArrowRight")  # into the row's menu
    menu = rows.nth(1).locator(".session-menu")
    expect(menu).to_have_attribute("open", "")
    expect(menu.locator(".menu-item").first).to_be_focused()
    problems = blocking_violations(page, f"chat list row menu from the keyboard ({mode})")
    page.keyboard.press("Escape")
    expect(rows.nth(1).locator(".session-link")).to_be_focused()
    expect(menu).not_to_have_attribute("open", "")
    assert not problems, "\n".join(problems)


def test_a_link_to_a_message_lands_on_it_in_any_version(mode_page, daphne_server: LiveServer) -> None:  # noqa: F811
    mode, width, page = mode_page
    chat, shown, other, result, tool = _server_python(daphne_server, VERSIONS.replace("{mode}", mode)).split()
    page.goto("/changes/")
    link = page.locator(f'a[href="/c/{chat}/#m{other}"]').first
    expect(link).to_be_visible()
    link.click()
    target = page.locator(f"#m{other}")
    expect(target).to_contain_text("The burrow is deep (other version).")  # the other version is shown
    expect(target).to_have_class(re.compile(r"\bhighlight\b"))
    expect(target).to_be_in_viewport()
    problems = blocking_violations(page, f"linked message in another version ({mode})")
    page.screenshot(path=str(SCREENSHOTS / f"message-link-{mode}.png"))

    # The older "#m-<id>" form, to a message shown far up a long chat.
    page.goto(f"/c/{chat}/")
    first = page.locator(".msg-user").first
    first_id = first.get_attribute("data-message-id")
    page.goto(f"/c/{chat}/#m-{first_id}")
    expect(first).to_have_class(re.compile(r"\bhighlight\b"))
    expect(first).to_be_in_viewport()

    # A tool's result has no row of its own: the link lands on the nearest message before it.
    page.goto(f"/c/{chat}/#m{result}")
    expect(page).to_have_url(re.compile(rf"\?m={result}#m{result}$"))
    landed = page.locator("#messages .highlight")
    expect(landed).to_have_count(1)
    assert int(landed.get_attribute("data-message-id") or 0) <= int(result)
    expect(landed).to_be_in_viewport()
    assert not problems, "\n".join(problems)


def test_the_settings_page_says_saved_only_after_a_save(mode_page) -> None:  # noqa: F811
    mode, width, page = mode_page
    page.goto("/settings/")
    expect(page.locator("#settings-saved")).to_have_count(0)
    expect(page.locator("main")).not_to_contain_text("Saved to")
    expect(page.locator("main")).to_contain_text("These settings live in")
    page.locator(".settings-form button[type=submit]").last.click()
    expect(page.locator("#settings-saved")).to_contain_text("Saved to")
    problems = blocking_violations(page, f"settings saved ({mode})")
    page.goto("/settings/")
    expect(page.locator("#settings-saved")).to_have_count(0)
    assert not problems, "\n".join(problems)
