"""A page on another origin gets nothing from the dashboard, in a real browser: while
the victim is logged in, an attacker page served by a second local server (another port, so
another origin but the same site for cookies) cannot open the websockets, post forms or read
pages; the server's state shows nothing happened."""

from __future__ import annotations

import hashlib
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import LiveServer
from tests.fakellm import Reply, ScriptedLLM

pytestmark = pytest.mark.browser


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


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
    messages_before = daphne_server.query("SELECT COUNT(*) FROM knowledge_message")[0][0]

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
    assert daphne_server.query("SELECT COUNT(*) FROM knowledge_message")[0][0] == messages_before
    assert not llm.chat_requests()
    log = daphne_server.log()
    assert re.search(r"POST /memory/memory/add/.* 403", log) or "Forbidden (Origin checking failed" in log, log[-2000:]
    # The victim's own page is unaffected and still talks to its socket.
    llm.push(Reply(text="still mine"))
    page.fill("#input", "hello from the owner")
    page.press("#input", "Enter")
    expect(page.locator(".msg-assistant").last).to_contain_text("still mine")
