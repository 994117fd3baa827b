"""Security in a real browser (issue 8): a page on another origin gets nothing, and a corpus of XSS
payloads placed everywhere a person or the model can write renders inertly on every page.

This module runs its own daphne (the `daphne_server` fixture is overridden here) so the corpus
(dozens of skills, sessions and memory entries) never leaks into the other browser tests.

"Inert" is checked four ways on every page: no dialog ever opens, `window.__xss` stays
undefined, a DOM walk finds no on* attribute, javascript:/data: URL, srcdoc, inline script or
embedding element, and no CSP violation was reported, i.e. the payloads were escaped rather
than merely blocked by the Content-Security-Policy (whose presence is asserted separately).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Dialog, Page, Response, expect

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
# A new socket (page load) gets a fresh per-connection rate-limit bucket (agent/ratelimit.py).
TURNS_PER_PAGE_LOAD = 15


@pytest.fixture(scope="module")
def daphne_server(tmp_path_factory: pytest.TempPathFactory, llm_server: ScriptedLLM) -> Iterator[LiveServer]:
    with start_daphne(tmp_path_factory.mktemp("security-home"), CONFIG, model_env(llm_server.base_url)) as server:
        yield server


def server_python(server: LiveServer, code: str) -> str:
    """Run Django code against the server's home and database; returns its last printed line."""
    env = {k: v for k, v in os.environ.items() if k not in ("HERMES_DB", "HERMES_DEBUG")}
    env.update(HERMES_HOME=str(server.home), HERMES_TEST_ISOLATED="1", DJANGO_SETTINGS_MODULE="hermes_site.settings")
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


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


# -- 1. another origin --------------------------------------------------------------------------------------

ATTACKER_PAGE = """<!doctype html>
<html><head><title>Totally harmless</title></head><body>
<iframe name="sink1"></iframe><iframe name="sink2"></iframe>
<form id="f1" method="post" action="{target}/memory/memory/add/" target="sink1">
  <input name="content" value="planted by the attacker"><input name="csrfmiddlewaretoken" class="tok">
</form>
<form id="f2" method="post" action="{target}/settings/" target="sink2">
  <input name="memory.memory_char_limit" value="7"><input name="csrfmiddlewaretoken" class="tok">
</form>
<script>
var R = window.results = {{ws: {{}}, fetch: {{}}, pending: 3}};
function done() {{ R.pending -= 1; }}
// Cookies ignore ports: this page can read the dashboard's CSRF cookie. It tries to use it.
var m = document.cookie.match(/csrftoken=([^;]+)/);
R.csrfCookieReadable = !!m;
document.querySelectorAll(".tok").forEach(function (el) {{ el.value = m ? m[1] : ""; }});
document.getElementById("f1").submit();
document.getElementById("f2").submit();
["/ws/chat/{session}/", "/ws/notify/"].forEach(function (path) {{
  var log = R.ws[path] = {{events: []}};
  var ws = new WebSocket("{ws_target}" + path);
  ws.onopen = function () {{
    log.events.push("open");
    ws.send(JSON.stringify({{type: "message", text: "hijacked message"}}));
  }};
  ws.onmessage = function (e) {{ log.events.push("message:" + e.data); }};
  ws.onerror = function () {{ log.events.push("error"); }};
  ws.onclose = function (e) {{ log.events.push("close:" + e.code); }};
}});
fetch("{target}/memory/", {{credentials: "include"}})
  .then(function (r) {{ return r.text(); }})
  .then(function (t) {{ R.fetch.cors = "read " + t.length + " chars"; }})
  .catch(function (e) {{ R.fetch.cors = "failed: " + e.name; }})
  .finally(done);
fetch("{target}/memory/", {{credentials: "include", mode: "no-cors"}})
  .then(function (r) {{ R.fetch.nocors = r.type; return r.text(); }})
  .then(function (t) {{ R.fetch.nocorsBody = t; }})
  .catch(function (e) {{ R.fetch.nocors = "failed: " + e.name; }})
  .finally(done);
var xhr = new XMLHttpRequest();
xhr.open("GET", "{target}/api/skills/slash");
xhr.withCredentials = true;
xhr.onload = function () {{ R.xhr = "read " + xhr.responseText.length; done(); }};
xhr.onerror = function () {{ R.xhr = "failed"; done(); }};
xhr.send();
</script></body></html>"""


@pytest.fixture
def attacker_site(daphne_server: LiveServer) -> Iterator[Callable[[str], str]]:
    """A second local web server (another port = another origin) serving the attacker's page."""
    pages: dict[str, bytes] = {}

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            body = pages.get(self.path.split("?")[0], b"not found")
            self.send_response(200 if self.path in pages else 404)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    base = f"http://127.0.0.1:{server.server_address[1]}"

    def publish(session_id: str) -> str:
        target = daphne_server.url
        pages["/"] = ATTACKER_PAGE.format(
            target=target, ws_target=target.replace("http://", "ws://"), session=session_id
        ).encode()
        return base + "/"

    yield publish
    server.shutdown()
    server.server_close()


def test_a_page_on_another_origin_cannot_use_the_socket_post_forms_or_read_data(
    page: Page, context: BrowserContext, daphne_server: LiveServer, llm: ScriptedLLM, attacker_site: Any, screenshot
) -> None:
    page.wait_for_selector('#chat[data-connected="1"]')  # the victim's own socket works
    session_id = str(page.get_attribute("#chat", "data-session"))
    memory, config = daphne_server.home / "memories" / "MEMORY.md", daphne_server.home / "config.yaml"
    before = (_digest(memory), _digest(config))
    messages_before = daphne_server.query("SELECT COUNT(*) FROM agent_message")[0][0]

    evil = context.new_page()  # same browser profile: the victim's cookies go along
    evil.goto(attacker_site(session_id))
    evil.wait_for_function("window.results && window.results.pending <= 0", timeout=20_000)
    # Each socket has either opened (the hole) or closed (refused): no waiting for a close that never comes.
    evil.wait_for_function("Object.values(window.results.ws).every(l => l.events.length > 0)", timeout=20_000)
    evil.wait_for_timeout(1000)  # the two form posts have landed (their frames are blocked anyway)
    results = evil.evaluate("window.results")
    screenshot("security-attacker-page", evil)

    for path, log in results["ws"].items():
        assert "open" not in log["events"] and not any(e.startswith("message:") for e in log["events"]), (path, log)
        assert log["events"][-1] == "close:1006", (path, log)  # the handshake was refused
    assert results["fetch"]["cors"].startswith("failed"), results
    assert results["fetch"]["nocors"] == "opaque" and results["fetch"]["nocorsBody"] == "", results
    assert results["xhr"] == "failed", results
    # The page could read the CSRF cookie (cookies are not port-scoped) and still got nowhere:
    # Django's Origin check refused the posts.
    assert results["csrfCookieReadable"] is True
    assert (_digest(memory), _digest(config)) == before
    assert daphne_server.query("SELECT COUNT(*) FROM agent_message")[0][0] == messages_before
    assert not llm.chat_requests()
    log = daphne_server.log()
    assert re.search(r"POST /memory/memory/add/.* 403", log) or "Forbidden (Origin checking failed" in log, log[-2000:]
    # The victim's own page is unaffected and still talks to its socket.
    llm.push(Reply(text="still mine"))
    page.fill("#input", "hello from the owner")
    page.press("#input", "Enter")
    expect(page.locator(".msg-assistant").last).to_contain_text("still mine")


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
    stored = daphne_server.query("SELECT COUNT(*) FROM agent_message WHERE session_id=? AND role='user'", session_id)[
        0
    ][0]
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
from agent.models import ChatSession, Message, ReviewRun
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
        daphne_server, SEED.format(payloads=json.dumps(PAYLOADS), word=SEARCH_WORD)
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
        "admin-sessions": "/admin/agent/chatsession/",
        "admin-messages": "/admin/agent/message/",
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
