"""Every page of the dashboard, with content, for the layout and accessibility tests.

`seed_site` fills the shared browser-test server once: a real chat turn through the browser (the
scripted model answers with a memory tool call, a code block and a table), a skill, a finished
review with a change, and a write waiting for approval. `site_pages` then lists each page a
person can reach, with the control that must stay on screen at every width.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass

from playwright.sync_api import Browser

from tests.browser.conftest import ROOT, LiveServer
from tests.daphne import server_env
from tests.fakellm import Reply, ScriptedLLM


@dataclass(frozen=True)
class SitePage:
    name: str
    path: str
    main_action: str  # a selector for the control a person came for; it must be visible at every width
    logged_in: bool = True
    open_drawer: bool = False  # the chat list: opened with its button on narrow windows


ANSWER = """Here is the check, with the comparison written as it is typed:

```python
def ok(k: int, x: bool) -> bool:
    return k < 1 and x  # "<" and "&" stay as typed
```

> A quoted line.

| option | meaning |
|---|---|
| `--dry-run` | print what would change without writing anything to the disk at all |
"""

# Creates, through the stores, what a few days of use leave behind: a review that changed memory,
# a write held for approval and one already rejected.
REVIEW_SCENARIO = """
from knowledge import changelog
from knowledge.models import PendingWrite, ReviewRun
from knowledge.provenance import Provenance
run = ReviewRun.objects.create(session_id={session!r}, prompt_kind="combined", status="done", trigger="nudge",
    summary="User profile updated", prompt_tokens=1200, completion_tokens=80, iterations=2, duration_ms=2300)
change = changelog.record(kind="memory", target="user", action="add",
    prov=Provenance(actor="review", review_id=run.pk, session_id={session!r}),
    before="Prefers short answers", after="Prefers short answers\\n§\\nWorks on the payments service in Go",
    summary="Added: Works on the payments service in Go")
PendingWrite.objects.create(kind="memory", tool_name="memory", review=run,
    arguments={{"target": "memory", "action": "add", "content": "Deploys go out on Tuesdays"}})
PendingWrite.objects.create(kind="memory", tool_name="memory", review=run,
    arguments={{"target": "memory", "action": "add", "content": "Likes tabs"}}).reject()
from knowledge.models import ChatSession, Message
# A chat with versions: a regenerated answer and an edited question.
chat = ChatSession.objects.create(title="Which port?", title_source="person", source="web")
ask = Message.objects.create(session=chat, role="user", content="Which port does Postgres use?")
Message.objects.create(session=chat, role="assistant", content="5432.")
again = Message.objects.create(session=chat, role="assistant", parent=ask, content="5432, unless `port` is set.")
Message.objects.create(session=chat, role="user", parent=again, content="And MySQL?")
Message.objects.create(session=chat, role="assistant", content="3306.")
Message.objects.create(session=chat, role="user", parent=again, content="And Redis?")
Message.objects.create(session=chat, role="assistant", content="6379.")
ChatSession.objects.filter(pk=chat.pk).update(message_count=7, user_turn_count=3)  # not an unused chat
print(run.pk, change.pk, chat.pk)
"""

_seeded: dict[str, dict[str, str]] = {}


def _server_python(server: LiveServer, code: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", code],
        cwd=ROOT,
        env=server_env(server.home),  # the server's home and database (SQLite or PostgreSQL)
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def _chat_turn(browser: Browser, server: LiveServer, llm: ScriptedLLM) -> str:
    ctx = browser.new_context(base_url=server.url, viewport={"width": 1280, "height": 860})
    try:
        page = ctx.new_page()
        page.goto(server.login_url("/"))
        with page.expect_navigation():  # the chat page it lands on, not the one it leaves
            page.click("#new-chat")
        page.wait_for_selector('#chat[data-connected="1"]')
        session = str(page.get_attribute("#chat", "data-session"))
        memory_call = {
            "name": "memory",
            "arguments": {"target": "user", "action": "add", "content": "Prefers short answers"},
        }
        llm.push(Reply(tool_calls=[memory_call]), Reply(text=ANSWER))
        page.fill("#input", "How do I check k < 1 && x in Python? Also: I prefer short answers.")
        page.press("#input", "Enter")
        page.wait_for_selector('#chat[data-busy="0"]')
        page.locator(".msg-assistant table").wait_for()
        return session
    finally:
        ctx.close()


def seed_site(browser: Browser, server: LiveServer, llm: ScriptedLLM) -> dict[str, str]:
    """Fill the server once per test session; returns the ids the page list needs."""
    if server.url in _seeded:
        return _seeded[server.url]
    server.write_skill(
        "release-checklist",
        "Steps to ship the payments service without downtime",
        "# Deploy\n\n1. Run `make test`.\n2. Tag the release.\n3. Watch the error rate for 10 minutes.\n",
        category="devops",
    )
    session = _chat_turn(browser, server, llm)
    review, change, versions = _server_python(server, REVIEW_SCENARIO.format(session=session)).split()
    share = _server_python(
        server, f"from knowledge import share_links; print(share_links.create({session!r}, None).token)"
    )
    _seeded[server.url] = {
        "session": session, "review": review, "change": change, "versions": versions, "share": share,
    }  # fmt: skip
    return _seeded[server.url]


def site_pages(ids: dict[str, str]) -> list[SitePage]:
    chat = f"/c/{ids['session']}/"
    return [
        SitePage("login", "/login", "button[type=submit]", logged_in=False),
        SitePage("chat", chat, "#send"),
        SitePage("sessions", chat, "#new-chat", open_drawer=True),
        # A chat with versions: its ‹ 2/2 › must read in both themes.
        SitePage("chat-versions", f"/c/{ids['versions']}/", ".versions .version-count"),
        SitePage("chat-share", f"{chat}share/", "#share-create"),
        SitePage("shared-chat", f"/s/{ids['share']}/", "#share-print"),
        SitePage("overview", "/overview/", "main h1"),
        SitePage("memory", "/memory/", ".memory-add button"),
        SitePage("skills", "/skills/", "a[href='/skills/new/']"),
        SitePage("skill-detail", "/skills/release-checklist/", "main h1"),
        SitePage("skill-new", "/skills/new/", "main button[type=submit]"),
        SitePage("search", "/search/?q=python", "main input[type=search]"),
        SitePage("changes", "/changes/", ".change-row a"),
        SitePage("change-detail", f"/changes/{ids['change']}/", "main h1"),
        SitePage("reviews", "/reviews/", ".review-row a"),
        SitePage("review-detail", f"/reviews/{ids['review']}/", "main form button"),
        SitePage("pending", "/pending/", ".pending-actions button"),
        SitePage("settings", "/settings/", ".settings-form button[type=submit]"),
        SitePage("import-export", "/transfer/", "#import-submit"),
        SitePage("not-found", "/no-such-page/", "main a[href='/']"),
    ]
