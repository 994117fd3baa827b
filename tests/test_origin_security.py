"""Access control and body limits, against a real daphne subprocess.

A page on another site, a DNS-rebinding name, another local port or a request without the login
token must get nothing: foreign Host headers are refused (400), every page redirects to /login,
every POST/htmx endpoint refuses, POSTs without a CSRF token or from another origin are refused
even with a valid session, and the websockets accept only same-origin, logged-in handshakes.

Oversized uploads and form bodies are refused with a clear message and nothing changed (the
chat socket's rate and frame limits are in tests/agent/chat/test_ratelimit.py).

`start_daphne` and `Http` (tests/daphne.py) are shared with tests/test_soak.py (plain http.client: no Playwright in
this process, docs/DECISIONS.md, record 16).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
from collections.abc import Iterator
from pathlib import Path

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin

from tests.daphne import Daphne, Http, start_daphne

pytestmark = pytest.mark.slow  # every test here talks to a daphne subprocess

# -- fixtures -------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
    home = tmp_path_factory.mktemp("access-home")
    (home / "memories").mkdir()
    (home / "memories" / "MEMORY.md").write_text("Seeded entry", encoding="utf-8")
    skill = home / "skills" / "seeded"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: seeded\ndescription: A seeded skill\n---\nBody\n", encoding="utf-8")
    with start_daphne(home) as srv:
        yield srv


@pytest.fixture(scope="module")
def owner(server: Daphne) -> Http:
    client = Http(server.port)
    client.login(server.token)
    return client


@pytest.fixture(scope="module")
def session_id(server: Daphne, owner: Http) -> str:
    assert owner.get("/").status == 200  # the home page opens (creates) the first chat
    return str(server.query("SELECT id FROM knowledge_chatsession ORDER BY started_at LIMIT 1")[0][0])


def _snapshot(home: Path) -> dict[str, str]:
    """Hashes of everything a request could change on disk (memories, skills, config, the saved model key)."""
    out: dict[str, str] = {}
    for path in sorted(
        [home / "config.yaml", home / "api_key", *(home / "memories").rglob("*"), *(home / "skills").rglob("*")]
    ):
        if path.is_file():
            out[str(path.relative_to(home))] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _db_counts(server: Daphne) -> tuple[int, ...]:
    tables = ("knowledge_chatsession", "knowledge_message", "knowledge_knowledgechange", "knowledge_pendingwrite")
    return tuple(server.query(f"SELECT COUNT(*) FROM {t}")[0][0] for t in tables)


# -- Host header (DNS rebinding) --------------------------------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "attacker.com:8765", "127.0.0.1.evil.example", "0.0.0.0:8000"])
def test_a_foreign_host_header_is_refused(server: Daphne, owner: Http, host: str) -> None:
    # A rebinding page sends its own name as Host; even with the owner's cookie it gets a 400.
    for path in ("/", "/login", "/memory/", f"/login?token={server.token}"):
        assert owner.get(path, host=host).status == 400, (host, path)
    assert owner.csrf_post("/memory/memory/add/", {"content": "via rebinding"}, host=host).status == 400
    assert "via rebinding" not in (server.home / "memories" / "MEMORY.md").read_text(encoding="utf-8")


def test_the_loopback_names_are_accepted(server: Daphne, owner: Http) -> None:
    for host in (f"127.0.0.1:{server.port}", f"localhost:{server.port}", "127.0.0.1"):
        assert owner.get("/memory/", host=host).status == 200, host


# -- the login token ------------------------------------------------------------------------------------------

PAGES = [
    "/",
    "/c/{sid}/",
    "/c/sessions/",
    "/memory/",
    "/memory/memory/0/",
    "/skills/",
    "/skills/new/",
    "/skills/seeded/",
    "/changes/",
    "/changes/1/",
    "/reviews/",
    "/reviews/1/",
    "/pending/",
    "/search/?q=seeded",
    "/overview/",
    "/settings/",
    "/c/{sid}/share/",
    "/transfer/",
    "/transfer/export/",
    "/api/skills/slash",
    "/admin/",
    "/admin/knowledge/chatsession/",
]
POSTS = [
    ("/memory/memory/add/", {"content": "planted"}),
    ("/memory/memory/0/edit/", {"content": "planted"}),
    ("/memory/memory/0/delete/", {}),
    ("/skills/new/", {"name": "planted", "content": "---\nname: planted\ndescription: d\n---\nx"}),
    ("/skills/seeded/edit/", {"content": "---\nname: seeded\ndescription: planted\n---\nx"}),
    ("/skills/seeded/toggle/", {}),
    ("/skills/seeded/delete/", {}),
    ("/skills/bulk/", {"action": "disable", "names": "seeded"}),
    ("/changes/1/undo/", {}),
    ("/reviews/1/undo/", {}),
    ("/pending/decide/", {"action": "approve", "ids": "1"}),
    ("/pending/1/approve/", {}),
    ("/pending/1/reject/", {}),
    ("/settings/", {"memory.memory_char_limit": "5"}),
    ("/transfer/import/", {"path": "/tmp"}),
    ("/transfer/imports/1/undo/", {}),
    ("/c/new/", {}),
    ("/c/{sid}/rename/", {"title": "planted"}),
    ("/c/{sid}/delete/", {}),
    ("/c/{sid}/pin/", {"on": "1"}),
    ("/c/{sid}/archive/", {"on": "1"}),
    ("/c/{sid}/tags/", {"add": "planted"}),
    ("/c/{sid}/settings/", {"instructions": "planted", "temperature": "1"}),
    ("/settings/connection/", {"base_url": "http://evil.example/v1", "key": "sk-planted", "model": "x"}),
    ("/settings/connection/check/", {"base_url": "http://evil.example/v1"}),
]


def test_without_the_token_only_login_and_static_files_are_reachable(server: Daphne, session_id: str) -> None:
    stranger = Http(server.port)
    assert stranger.get("/login").status == 200
    assert stranger.get("/static/js/app.js").status == 200
    assert stranger.get("/login?token=not-the-token").status == 403
    assert "sessionid" not in stranger.cookies
    for path in PAGES:
        resp = stranger.get(path.format(sid=session_id))
        assert resp.status == 302 and resp.location.startswith("/login"), (path, resp.status)
        # htmx requests get a 401 and an HX-Redirect instead of a login page swapped into a panel
        resp = stranger.get(path.format(sid=session_id), headers={"HX-Request": "true"})
        assert resp.status == 401 and resp.headers.get("hx-redirect") == "/login", path


def test_without_the_token_every_post_endpoint_refuses_and_nothing_changes(server: Daphne, session_id: str) -> None:
    stranger = Http(server.port)
    stranger.get("/login")  # a CSRF cookie of its own does not help
    before, counts = _snapshot(server.home), _db_counts(server)
    for path, form in POSTS:
        url = path.format(sid=session_id)
        resp = stranger.post(url, form, headers={"Origin": server.origin})
        assert resp.status == 302 and resp.location.startswith("/login"), (path, resp.status)
        resp = stranger.post(url, form, headers={"Origin": server.origin, "HX-Request": "true"})
        assert resp.status == 401, (path, resp.status)
    assert _snapshot(server.home) == before
    assert _db_counts(server) == counts


# -- CSRF ----------------------------------------------------------------------------------------------------


def test_a_post_without_a_csrf_token_is_refused_even_when_logged_in(
    server: Daphne, owner: Http, session_id: str
) -> None:
    before, counts = _snapshot(server.home), _db_counts(server)
    for path, form in POSTS:
        resp = owner.post(path.format(sid=session_id), form, headers={"Origin": server.origin})
        assert resp.status == 403, (path, resp.status)
        resp = owner.post(path.format(sid=session_id), form, headers={"Origin": server.origin, "HX-Request": "true"})
        assert resp.status == 403, (path, resp.status)
    assert _snapshot(server.home) == before
    assert _db_counts(server) == counts


@pytest.mark.parametrize("origin", ["http://evil.example", "http://127.0.0.1:1", "http://localhost:1", "null"])
def test_a_post_from_another_origin_is_refused_even_with_the_token(server: Daphne, owner: Http, origin: str) -> None:
    # Another local port can read the (non-HttpOnly) CSRF cookie: cookies ignore ports. The
    # Origin check is what stops it.
    before = _snapshot(server.home)
    resp = owner.csrf_post("/memory/memory/add/", {"content": "cross origin"}, headers={"Origin": origin})
    assert resp.status == 403
    resp = owner.csrf_post("/settings/", {"memory.memory_char_limit": "5"}, headers={"Origin": origin})
    assert resp.status == 403
    assert _snapshot(server.home) == before


def test_the_same_post_with_the_token_from_the_dashboard_works(server: Daphne, owner: Http) -> None:
    resp = owner.csrf_post("/memory/memory/add/", {"content": "Added with a CSRF token"})
    assert resp.status == 302, resp.body[:500]
    assert "Added with a CSRF token" in (server.home / "memories" / "MEMORY.md").read_text(encoding="utf-8")


# -- websockets ----------------------------------------------------------------------------------------------


def _ws_url(server: Daphne, path: str) -> str:
    return f"ws://127.0.0.1:{server.port}{path}"


def _cookie(client: Http) -> dict[str, str]:
    return {"Cookie": f"sessionid={client.cookies['sessionid']}"}


async def _refused(url: str, origin: str | None, headers: dict[str, str]) -> int:
    with pytest.raises(InvalidStatus) as info:
        async with ws_connect(
            url, origin=Origin(origin) if origin else None, additional_headers=headers, open_timeout=10
        ):
            pass
    return info.value.response.status_code


WS_FOREIGN_ORIGINS = [
    "http://evil.example",
    "http://attacker.com:{port}",  # DNS rebinding: the attacker's name, our port
    "http://127.0.0.1:1",  # another local port: same site (cookies are sent) but another origin
    "http://localhost:1",
    "http://localhost:{port}",  # the page asked for 127.0.0.1: another origin, however close
    "https://127.0.0.1:{port}",
    "null",
    None,  # no Origin at all
]


@pytest.mark.parametrize("origin", WS_FOREIGN_ORIGINS)
async def test_a_websocket_from_another_origin_is_refused_even_with_the_session_cookie(
    server: Daphne, owner: Http, session_id: str, origin: str | None
) -> None:
    for path in (f"/ws/chat/{session_id}/", "/ws/notify/"):
        status = await _refused(_ws_url(server, path), origin and origin.format(port=server.port), _cookie(owner))
        assert status == 403, (path, origin)


async def test_a_same_origin_websocket_with_the_session_is_accepted(
    server: Daphne, owner: Http, session_id: str
) -> None:
    for origin in (server.origin, server.origin.upper().replace("HTTP", "http")):
        for path in (f"/ws/chat/{session_id}/", "/ws/notify/"):
            async with ws_connect(
                _ws_url(server, path),
                origin=Origin(origin),
                additional_headers=_cookie(owner),
                open_timeout=10,
            ) as ws:
                await ws.send(json.dumps({"type": "ping"}))
                assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "pong"}


async def test_a_same_origin_websocket_without_the_session_is_refused(server: Daphne, session_id: str) -> None:
    for path in (f"/ws/chat/{session_id}/", "/ws/notify/"):
        assert await _refused(_ws_url(server, path), server.origin, {}) == 403
        assert await _refused(_ws_url(server, path), server.origin, {"Cookie": "sessionid=forged"}) == 403


# -- limits: oversized bodies and uploads --------------------------------------------------------------------


def test_an_oversized_upload_is_refused_with_a_clear_message_and_nothing_changes(server: Daphne, owner: Http) -> None:
    from knowledge.transfer.hermes_import import MAX_ARCHIVE_BYTES

    before, counts = _snapshot(server.home), _db_counts(server)
    boundary = "----hermes" + secrets.token_hex(8)
    head = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="csrfmiddlewaretoken"\r\n\r\n'
        f"{owner.cookies['csrftoken']}\r\n--{boundary}\r\n"
        'Content-Disposition: form-data; name="archive"; filename="home.zip"\r\n'
        "Content-Type: application/zip\r\n\r\n"
    ).encode()
    body = head + b"\0" * (MAX_ARCHIVE_BYTES + 2 * 1024 * 1024) + f"\r\n--{boundary}--\r\n".encode()
    resp = owner.request(
        "POST",
        "/transfer/import/",
        body=body,
        headers={"Content-Type": f"multipart/form-data; boundary={boundary}", "Origin": server.origin},
        timeout=120,
    )
    assert resp.status == 413
    assert "larger than 50 MB" in resp.body and "Nothing was imported" in resp.body
    assert _snapshot(server.home) == before and _db_counts(server) == counts


def test_an_oversized_form_body_is_refused_and_nothing_changes(server: Daphne, owner: Http) -> None:
    before = _snapshot(server.home)
    resp = owner.csrf_post("/memory/memory/add/", {"content": "x" * (6 * 1024 * 1024)})
    assert resp.status in (400, 413)
    assert _snapshot(server.home) == before
