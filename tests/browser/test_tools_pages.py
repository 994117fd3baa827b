"""Search, overview, settings and import/export in a real browser (daphne + Debian Chromium)."""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import pytest
from playwright.sync_api import Dialog, Page, expect

from tests.fakellm import Reply

pytestmark = pytest.mark.browser

HOSTILE = '<script>alert("s")</script> <img src=x onerror=alert(2)> [click](javascript:alert(3)) quetzalcoatl'


def chat_once(page: Page, llm, text: str, answer: str = "Noted.") -> str:
    """One turn in a fresh chat; returns the session id."""
    page.goto("/")
    with page.expect_navigation():  # the chat page it lands on, not the one it leaves
        page.click("#new-chat")
    page.wait_for_selector('#chat[data-connected="1"]')
    session_id = str(page.get_attribute("#chat", "data-session"))
    llm.push(Reply(text=answer))
    page.fill("#input", text)
    page.press("#input", "Enter")
    page.wait_for_selector('#chat[data-busy="0"]')
    expect(page.locator(".msg-assistant")).to_have_count(1)
    return session_id


def test_search_as_you_type_and_link_lands_on_the_message(page: Page, llm, daphne_server, screenshot) -> None:
    session_id = chat_once(page, llm, "Remember that the staging database is called axolotl-db")
    chat_once(page, llm, "Something unrelated about lunch")  # the old session is no longer the current one
    (message_id,) = daphne_server.query(
        "select id from knowledge_message where session_id=? and role='user'", session_id
    )[0]

    page.goto("/search/")
    page.locator("#search-q").press_sequentially("axolotl", delay=40)  # typed, no Enter: results come as you type
    hit = page.locator(".search-hit-link")
    expect(hit).to_have_count(1)
    expect(page.locator("#search-results mark").first).to_have_text(re.compile("axolotl", re.I))
    expect(page).to_have_url(re.compile(r"/search/\?q=axolotl"))
    screenshot("tools-search", page)

    # A result list swapped in between the mouse's press and release swallows the click (as it
    # would a person's), so click once no search is in flight.
    page.wait_for_function("() => !document.querySelector('.htmx-request')")
    hit.click()
    expect(page).to_have_url(re.compile(rf"/c/{session_id}/\?m={message_id}#m{message_id}$"), timeout=15_000)
    target = page.locator(f"#m{message_id}")
    expect(target).to_have_class(re.compile(r"\bhighlight\b"))
    expect(target).to_be_in_viewport()
    expect(target).to_contain_text("axolotl-db")


def test_search_filters_and_no_js_form(page: Page, llm, daphne_server) -> None:
    chat_once(page, llm, "The ferret plan", answer="A ferret answer")
    page.goto("/search/?q=ferret&role=assistant")
    expect(page.locator(".search-hit")).to_have_count(1)
    expect(page.locator(".search-hit .badge").first).to_have_text("assistant")
    page.locator('input[name="role"][value="assistant"]').uncheck()  # a filter change re-runs the search
    expect(page.locator(".search-hit")).to_have_count(2)


def test_search_syntax_or_prefix_and_the_hint(page: Page, llm, daphne_server, screenshot) -> None:
    chat_once(page, llm, "The bilby glockenspiel failed", answer="Roll back the bilby marimba")
    page.goto("/search/")
    page.locator("#search-q").press_sequentially("glocken*", delay=20)
    expect(page.locator(".search-hit")).to_have_count(1)
    expect(page.locator(".search-title")).to_have_count(1)  # the chat is titled by its first message
    page.goto("/search/?q=zebra+OR+marimba")
    expect(page.locator(".search-hit")).to_have_count(1)
    expect(page.locator(".search-hit .badge").first).to_have_text("assistant")
    page.goto("/search/")
    page.locator("#search-q").press_sequentially("Zeb*", delay=20)
    expect(page.locator("#search-hint")).to_contain_text("word* finds words that start with it")
    expect(page.locator("#search-count")).to_contain_text("No messages match")
    screenshot("tools-search-hint", page)
    page.locator("#search-q").fill("")
    # The answer is left out. (The words are this test's own: the home is shared by the browser tests.)
    page.locator("#search-q").press_sequentially("bilby -marimba", delay=20)
    expect(page.locator(".search-hit")).to_have_count(1)
    expect(page.locator(".search-hit .badge").first).to_have_text("user")
    page.locator("#search-q").fill("")
    page.locator("#search-q").press_sequentially("-bilby", delay=20)
    expect(page.locator("#search-hint")).to_contain_text("only leaves words out")
    expect(page.locator(".search-hit")).to_have_count(0)


def _hermes_zip(tmp_path: Path) -> Path:
    files = {
        "hermes/memories/MEMORY.md": "Imported note: builds use make\n§\nMulti-line\nimported note",
        "hermes/memories/USER.md": "Imported: prefers dark mode",
        "hermes/skills/imported-bisect/SKILL.md": "---\nname: imported-bisect\ndescription: Bisect a regression\n---\n\nRun git bisect.\n",
        "hermes/skills/ops/imported-compose/SKILL.md": "---\nname: imported-compose\ndescription: Debug compose\n---\n\nCheck logs.\n",
        "hermes/skills/ops/imported-compose/references/ports.md": "5432 postgres\n",
    }
    path = tmp_path / "hermes-home.zip"
    with zipfile.ZipFile(path, "w") as zf:
        for name, text in files.items():
            zf.writestr(name, text)
    return path


def _files(home: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(home)): p.read_bytes()
        for sub in ("memories", "skills")
        for p in sorted((home / sub).rglob("*"))
        if (home / sub).exists() and p.is_file() and not p.name.endswith(".lock") and p.name != ".lock"
    }


def test_import_from_page_and_undo(page: Page, daphne_server, tmp_path: Path, screenshot) -> None:
    home = daphne_server.home
    before = _files(home)
    page.goto("/transfer/")
    page.set_input_files("#import-archive", str(_hermes_zip(tmp_path)))
    page.click("#import-submit")
    report = page.locator("#import-report")
    expect(report).to_contain_text("2 skills")
    expect(report).to_contain_text("imported-compose")
    assert "Imported: prefers dark mode" in (home / "memories" / "USER.md").read_text()
    assert (home / "skills" / "ops" / "imported-compose" / "references" / "ports.md").is_file()
    assert daphne_server.query("select count(*) from knowledge_knowledgechange where actor='import'")[0][0] >= 6
    screenshot("tools-import", page, full_page=True)

    page.goto("/skills/")  # the curation page lists the imported skill (if that page exists yet)
    page.goto("/transfer/")
    page.once("dialog", lambda d: d.accept())  # the undo button asks for confirmation
    page.locator(".undo-import").first.click()
    expect(page.locator("#transfer-undone")).to_be_visible()
    assert _files(home) == before


def test_settings_bad_value_shows_the_key(page: Page, daphne_server, screenshot) -> None:
    before = (daphne_server.home / "config.yaml").read_bytes()
    page.goto("/settings/")
    screenshot("tools-settings", page, full_page=True)
    field = page.locator('input[name="memory.nudge_interval"]')
    field.fill("-3")
    page.click("#settings-save")
    expect(page.locator("#settings-error")).to_contain_text("memory.nudge_interval")
    expect(page.locator('[id="err-memory.nudge_interval"]')).to_be_visible()
    expect(field).to_have_value("-3")
    screenshot("tools-settings-error", page)
    assert (daphne_server.home / "config.yaml").read_bytes() == before


def test_hostile_content_is_inert_on_tools_pages(page: Page, llm, daphne_server, screenshot) -> None:
    dialogs: list[str] = []

    def on_dialog(d: Dialog) -> None:
        dialogs.append(d.message)
        d.dismiss()

    page.on("dialog", on_dialog)
    chat_once(page, llm, HOSTILE, answer=HOSTILE)
    daphne_server.write_skill("hostile-skill", '"<img src=x onerror=alert(5)><script>alert(6)</script>"', "Body")
    page.goto("/search/")
    page.locator("#search-q").press_sequentially("quetzalcoatl", delay=20)
    expect(page.locator(".search-hit")).to_have_count(2)
    expect(page.locator("#search-results")).to_contain_text('<script>alert("s")</script>')
    page.goto("/search/?q=")
    page.goto("/overview/")
    expect(page.locator("#never-used")).to_contain_text("<img src=x onerror=alert(5)>")
    screenshot("tools-overview", page, full_page=True)
    page.goto("/transfer/")
    screenshot("tools-transfer", page)
    assert page.locator("#main img, #main script").count() == 0
    page.wait_for_timeout(300)
    assert dialogs == []
