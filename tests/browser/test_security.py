"""Security in a real browser: a corpus of XSS payloads placed everywhere a person or
the model can write renders inertly on every page (the attacker page on another origin is in
tests/browser/test_cross_origin.py).

This module runs its own daphne (the `daphne_server` fixture is overridden here) so the corpus
(dozens of skills, sessions and memory entries) never leaks into the other browser tests.

"Inert" is checked four ways on every page: no dialog ever opens, `window.__xss` stays
undefined, a DOM walk finds no on* attribute, javascript:/data: URL, srcdoc, inline script or
embedding element, and no CSP violation was reported, i.e. the payloads were escaped rather
than merely blocked by the Content-Security-Policy (whose presence is asserted separately).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Dialog, Page, Response, expect

from tests import dbs
from tests.browser.conftest import LiveServer
from tests.daphne import ROOT, model_env, start_daphne
from tests.fakellm import Reply, ScriptedLLM, last_user_text
from tests.xss_corpus import CSP_RECORDER_JS, DOM_CHECK_JS, PAYLOADS, SEARCH_WORD

pytestmark = pytest.mark.browser

# Reviews off (nudges 0) so every model call in these tests is a chat turn we scripted.
CONFIG = """\
model:
  max_retries: 0
  timeout: 20
memory:
  flush_min_turns: 0
  nudge_interval: 0
skills:
  creation_nudge_interval: 0
"""
# A new socket (page load) gets a fresh per-connection rate-limit bucket (agent/chat/ratelimit.py).
TURNS_PER_PAGE_LOAD = 15


@pytest.fixture(scope="module")
def daphne_server(tmp_path_factory: pytest.TempPathFactory, llm_server: ScriptedLLM) -> Iterator[LiveServer]:
    with start_daphne(tmp_path_factory.mktemp("security-home"), CONFIG, model_env(llm_server.base_url)) as server:
        yield server


def server_python(server: LiveServer, code: str) -> str:
    """Run Django code against the server's home and database; returns its last printed line."""
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_DB", "HERMES_DEBUG")}
    env.update(
        HERMES_HOME=str(server.home), DJANGO_SETTINGS_MODULE="hermes_site.settings", **dbs.database_env(server.home)
    )
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


# -- 2. the XSS corpus --------------------------------------------------------------------------------------


class Watch:
    """Dialogs and per-page checks for one browser page."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.dialogs: list[str] = []
        page.on("dialog", self._dialog)

    def _dialog(self, dialog: Dialog) -> None:
        self.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    def check(self, where: str) -> None:
        found = self.page.evaluate(DOM_CHECK_JS)
        assert found["bad"] == [], (where, found["bad"][:10])
        assert found["xss"] is None, (where, found)
        assert found["csp"] == [], (where, found["csp"][:5])  # escaped, not merely blocked
        assert self.dialogs == [], (where, self.dialogs)

    def visit(self, url: str) -> None:
        response = self.page.goto(url)
        assert response is not None and response.status == 200, (url, response and response.status)
        assert_csp(response)
        self.page.wait_for_load_state("networkidle")
        self.check(url)


def assert_csp(response: Response) -> None:
    csp = response.headers.get("content-security-policy", "")
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "unsafe-eval" not in csp, csp
    assert "object-src 'none'" in csp and "base-uri 'none'" in csp, csp


@pytest.fixture
def watched(context: BrowserContext, page: Page) -> Watch:
    context.add_init_script(CSP_RECORDER_JS)  # for pages opened from now on (and reloads)
    page.reload()
    return Watch(page)


def _payload_reply(body: dict[str, Any]) -> Reply:
    match = re.match(rf"{SEARCH_WORD} (\d+) ", last_user_text(body))
    return Reply(text=PAYLOADS[int(match.group(1))] if match else "no payload here")


def test_payloads_in_chat_messages_and_streamed_answers_are_inert(
    watched: Watch, llm: ScriptedLLM, daphne_server: LiveServer, screenshot
) -> None:
    page = watched.page
    page.goto("/")
    with page.expect_navigation():  # the chat page it lands on, not the one it leaves
        page.click("#new-chat")
    page.wait_for_selector('#chat[data-connected="1"]')
    session_id = str(page.get_attribute("#chat", "data-session"))
    llm.default = _payload_reply
    for i, payload in enumerate(PAYLOADS):
        if i and i % TURNS_PER_PAGE_LOAD == 0:
            page.reload()  # stored messages rendered by the server; a fresh socket
            page.wait_for_selector('#chat[data-connected="1"]')
            watched.check(f"chat after reload at turn {i}")
        answers = page.locator(".msg-assistant").count()
        page.fill("#input", f"{SEARCH_WORD} {i} {payload}")
        page.press("#input", "Enter")
        page.wait_for_selector('#chat[data-busy="0"]')
        expect(page.locator(".msg-assistant")).to_have_count(answers + 1)
        watched.check(f"chat turn {i}: {payload!r}")
    # One long answer with the whole corpus, checked while it is still streaming.
    llm.push(Reply(text="\n\n".join(PAYLOADS), chunk_delay=0.004))
    page.fill("#input", "everything at once")
    page.press("#input", "Enter")
    page.locator(".msg-assistant.streaming").wait_for()
    checks = 0
    while page.locator(".msg-assistant.streaming").count():
        watched.check("chat while streaming")
        checks += 1
        page.wait_for_timeout(100)
    assert checks >= 3, checks
    page.wait_for_selector('#chat[data-busy="0"]')
    watched.check("chat after the streamed corpus")
    stored = daphne_server.query(
        "SELECT COUNT(*) FROM knowledge_message WHERE session_id=? AND role='user'", session_id
    )[0][0]
    assert stored == len(PAYLOADS) + 1
    page.reload()
    page.wait_for_selector('#chat[data-connected="1"]')
    watched.check("chat after reload")
    # The model's text is shown as text: the first payload is visible verbatim, not executed.
    expect(page.locator(".msg-assistant").first).to_contain_text("<script>window.__xss=1</script>")
    screenshot("security-xss-chat", page)

    # Session titles: the first message titled the chat; now rename it to payloads by hand.
    for title in ['"><script>alert(1)</script>', "</title><script>alert(1)</script>", "<img src=x onerror=alert(1)>"]:
        page.get_by_role("button", name="Rename").click()
        page.locator(".rename-form input[name=title]").fill(title)
        page.locator(".rename-form").get_by_role("button", name="Save").click()
        expect(page.locator("#chat-title-text")).to_have_text(title)
        watched.check(f"renamed to {title!r}")
        page.reload()
        expect(page.locator("#chat-title-text")).to_have_text(title)
        watched.check(f"reloaded with title {title!r}")


SEED = """
import json
from knowledge.models import ChatSession, Message, ReviewRun
from knowledge import changelog
from knowledge.models import PendingWrite
from knowledge.provenance import Provenance
payloads = json.loads({payloads!r})
word = {word!r}
everything = "\\n\\n".join(payloads)
sessions = []
for i, p in enumerate(payloads):
    s = ChatSession.objects.create(title=p[:200])
    Message.objects.create(session=s, role="user", content=f"{{word}} {{i}} {{p}}")
    Message.objects.create(session=s, role="assistant", content=f"{{p}} {{word}} answer")
    sessions.append(s)
run = ReviewRun.objects.create(session=sessions[0], prompt_kind="combined", status="failed", summary=everything,
    error=everything, changes=[{{"message": p}} for p in payloads])
for p in payloads[:20]:
    ReviewRun.objects.create(session=sessions[1], prompt_kind="memory", status="done", summary=p,
        changes=[{{"message": p}}])
changes = [changelog.record(kind="memory", target="memory", action="add", before="", after=p, summary=p,
    prov=Provenance(actor="review", review_id=run.pk, session_id=sessions[0].pk)) for p in payloads]
big = changelog.record(kind="memory", target="user", action="replace", before=everything, after=everything + "\\nmore",
    summary=everything, prov=Provenance(actor="user"))
for p in payloads[:25]:
    PendingWrite.objects.create(kind="memory", tool_name="memory", review=run,
        arguments={{"target": "memory", "action": "add", "content": p}})
PendingWrite.objects.create(kind="skill", tool_name="skill_manage", review=run,
    arguments={{"action": "create", "name": "xss-pending", "content": "---\\nname: xss-pending\\ndescription: d\\n---\\n" + everything}})
print(run.pk, big.pk, changes[0].pk, sessions[0].pk)
"""


def _write_corpus_files(home: Path) -> None:
    """Hand edits: the files are written directly, bypassing the agent's threat scan."""
    memories = home / "memories"
    memories.mkdir(exist_ok=True)
    (memories / "MEMORY.md").write_text("\n§\n".join(PAYLOADS), encoding="utf-8")
    (memories / "USER.md").write_text("\n§\n".join(reversed(PAYLOADS)), encoding="utf-8")
    body = "\n\n".join(PAYLOADS) + "\n"
    for i, payload in enumerate(PAYLOADS):
        folder = home / "skills" / f"xss-{i:02d}"
        (folder / "references").mkdir(parents=True, exist_ok=True)
        # JSON is valid YAML for a one-line string: the payload survives quotes, colons and braces.
        description = json.dumps(payload.replace("\n", " "))
        (folder / "SKILL.md").write_text(
            f"---\nname: xss-{i:02d}\ndescription: {description}\n---\n# {payload}\n\n{body}", encoding="utf-8"
        )
        (folder / "references" / "payloads.md").write_text(body, encoding="utf-8")


def test_payloads_in_every_store_render_inertly_on_every_page(
    watched: Watch, daphne_server: LiveServer, screenshot
) -> None:
    _write_corpus_files(daphne_server.home)
    run_id, big_change, first_change, session_id = server_python(
        # The seed writes rows directly, past the models' NUL handling: PostgreSQL text cannot hold NUL.
        daphne_server,
        SEED.format(payloads=json.dumps([p.replace("\x00", "\ufffd") for p in PAYLOADS]), word=SEARCH_WORD),
    ).split()
    q = "%3Cscript%3Ealert(1)%3C%2Fscript%3E"  # reflected in the page: the search box, "no results for …"
    pages = {
        "chat": f"/c/{session_id}/",
        "chat-sidebar-search": f"/c/{session_id}/?q={SEARCH_WORD}",
        "home": "/",
        "memory": "/memory/",
        "memory-entry-edit": "/memory/memory/0/?edit=1",
        "skills": "/skills/",
        "skills-filter-reflected": f"/skills/?q={q}",
        "skill-detail": "/skills/xss-00/",
        "skill-detail-2": "/skills/xss-48/",
        "skill-file": "/skills/xss-05/?file=references/payloads.md",
        "skill-new": "/skills/new/",
        "changes": "/changes/",
        "changes-reflected": f"/changes/?target={q}&kind={q}",
        "change-detail": f"/changes/{big_change}/",
        "change-detail-small": f"/changes/{first_change}/",
        "reviews": "/reviews/",
        "review-detail": f"/reviews/{run_id}/",
        "pending": "/pending/",
        "search": f"/search/?q={SEARCH_WORD}",
        "search-payload-word": "/search/?q=script",
        "search-reflected": f"/search/?q={q}",
        "overview": "/overview/",
        "settings": "/settings/",
        "transfer": "/transfer/",
        "admin-sessions": "/admin/knowledge/chatsession/",
        "admin-messages": "/admin/knowledge/message/",
    }
    for name, url in pages.items():
        watched.visit(url)
        screenshot(f"security-xss-{name}", watched.page, full_page=False)
    page = watched.page
    # The content is really there (shown as text), so "nothing ran" is not "nothing shown".
    page.goto("/memory/")
    expect(page.locator("#memory-panel, main").first).to_contain_text("<script>window.__xss=1</script>")
    page.goto(f"/search/?q={SEARCH_WORD}")
    expect(page.locator("main")).to_contain_text("<script>alert(1)</script>")
    watched.check("search results")
    # Interactive swaps: edit a hostile entry in place, and search as you type.
    page.goto("/memory/")
    page.locator("#entry-memory-0").get_by_role("button", name="Edit").click()
    expect(page.locator("#entry-memory-0 textarea")).to_have_value(PAYLOADS[0])
    watched.check("memory edit form")
    page.goto("/search/")
    page.locator("input[name=q]").first.fill(SEARCH_WORD)
    page.wait_for_load_state("networkidle")
    page.wait_for_timeout(600)
    watched.check("search as you type")
    page.goto(f"/c/{session_id}/")
    page.locator("#session-search, input[name=q]").first.fill(SEARCH_WORD)
    page.wait_for_timeout(800)
    watched.check("sidebar search")
    assert watched.dialogs == []


SHARE_SEED = """
import json
from knowledge import share_links
from knowledge.models import ChatSession, Message
payloads = json.loads({payloads!r})
s = ChatSession.objects.create(title=payloads[0][:200])
parent = None
for i, p in enumerate(payloads):
    parent = Message.objects.create(session=s, role="user", content=f"shared {{i}} {{p}}", parent=parent)
    parent = Message.objects.create(session=s, role="assistant", content=f"{{p}} shared answer", parent=parent)
ChatSession.objects.filter(pk=s.pk).update(leaf_id=parent.pk)
print(s.pk, share_links.create(s.pk, None).token)
"""


def test_payloads_in_a_shared_chat_are_inert_for_its_reader(
    browser, watched: Watch, daphne_server: LiveServer, screenshot
) -> None:
    """The public share page renders the corpus through the same sanitising Markdown, under the same
    CSP, for a reader who is not logged in; the owner's share panel for that chat does too."""
    payloads = json.dumps([p.replace("\x00", "\ufffd") for p in PAYLOADS])
    session_id, token = server_python(daphne_server, SHARE_SEED.format(payloads=payloads)).split()
    watched.visit(f"/c/{session_id}/share/")
    reader = browser.new_context(base_url=daphne_server.url)  # no login
    try:
        reader.add_init_script(CSP_RECORDER_JS)
        page = reader.new_page()
        watch = Watch(page)
        watch.visit(f"/s/{token}/")
        expect(page.locator(".share-assistant").first).to_contain_text("<script>window.__xss=1</script>")
        expect(page.locator(".share-user")).to_have_count(len(PAYLOADS))
        assert page.locator("nav, form, textarea").count() == 0
        screenshot("security-xss-share", page, full_page=False)
    finally:
        reader.close()
