"""The skill curator in a real browser: "Ask the curator now" on the skills page leaves a report in
the inbox, approving one item archives that skill, and the skills page lists it as archived and
restores it; at 1280 px, and at 390x844 the report and the archived list fit the screen. axe on
each page, like every other browser test."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import LiveServer
from tests.browser.site_pages import _server_python
from tests.browser.test_a11y import blocking_violations

pytestmark = pytest.mark.browser

# Skills the background review made long ago and nobody used since; names no other test uses.
SEED = """
from datetime import timedelta
from django.utils import timezone
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
store = SkillStore()
for name, what in (("kite-repair", "Patch a torn kite sail with ripstop tape"),
                   ("lantern-wicks", "Trim and replace the wicks of oil lanterns")):
    if store.find(name) is None:
        store.create(name, f"---\\nname: {name}\\ndescription: {what}\\n---\\n# {name}\\n1. Begin.\\n",
                     prov=Provenance(actor="review"))
    long_ago = timezone.now() - timedelta(days=200)
    KnowledgeChange.objects.filter(kind="skill", target=name).update(created_at=long_ago)
    SkillUsage.objects.filter(name=name).update(last_used=long_ago, uses=2, pinned=False)
print("ok")
"""


def no_sideways_scroll(page: Page) -> bool:
    return bool(page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth"))


def test_approve_an_item_of_the_report_then_restore_it(browser: Browser, daphne_server: LiveServer, screenshot):
    _server_python(daphne_server, SEED)
    ctx = browser.new_context(base_url=daphne_server.url, viewport={"width": 1280, "height": 860})
    ctx.set_default_timeout(15_000)
    page = ctx.new_page()
    page.goto(daphne_server.login_url("/skills/"))
    expect(page.locator("#skill-kite-repair")).to_contain_text("stale")

    page.get_by_role("button", name="Ask the curator now").click()
    page.wait_for_url("**/pending/?review=*")
    report = page.url.rsplit("=", 1)[1]
    expect(page.locator("main h1")).to_contain_text(f"Curator report #{report}")
    item = page.locator("article.pending-item", has_text="kite-repair")
    expect(item).to_contain_text("Unused since")
    expect(item).to_contain_text("Archives")
    assert not blocking_violations(page, "curator report (1280px)")
    screenshot("curator-report-1280", page)

    item.get_by_role("button", name="Approve", exact=True).click()
    expect(page.locator(".flash.success")).to_contain_text("Archived skill 'kite-repair'")
    expect(page.locator("article.pending-item", has_text="lantern-wicks")).to_be_visible()  # still waits

    page.goto("/skills/")
    expect(page.locator("#skill-kite-repair")).to_have_count(0)
    archived = page.locator('#archived tr[data-archived="kite-repair"]')
    expect(archived).to_contain_text("Patch a torn kite sail")
    assert not blocking_violations(page, "skills with an archived skill (1280px)")
    screenshot("curator-archived-1280", page)

    # At phone size: the report and the archived list fit the width, and pass axe.
    phone = browser.new_context(base_url=daphne_server.url, viewport={"width": 390, "height": 844})
    phone.set_default_timeout(15_000)
    small = phone.new_page()
    small.goto(daphne_server.login_url(f"/pending/?review={report}"))
    expect(small.locator("article.pending-item", has_text="lantern-wicks")).to_be_visible()
    assert no_sideways_scroll(small)
    assert not blocking_violations(small, "curator report (390px)")
    small.goto("/skills/#archived")
    expect(small.locator('#archived tr[data-archived="kite-repair"]')).to_be_visible()
    assert no_sideways_scroll(small)
    assert not blocking_violations(small, "skills with an archived skill (390px)")
    screenshot("curator-archived-390", small)
    phone.close()

    archived.get_by_role("button", name="Restore kite-repair").click()
    expect(page.locator(".flash.success")).to_contain_text("Restored 'kite-repair'")
    expect(page.locator("#skill-kite-repair")).to_be_visible()
    expect(page.locator('#archived tr[data-archived="kite-repair"]')).to_have_count(0)
    ctx.close()
