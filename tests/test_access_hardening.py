"""Login throttling, a token-free access log and a logout that ends every session."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator

import pytest
from websockets.asyncio.client import connect as ws_connect
from websockets.exceptions import ConnectionClosed
from websockets.typing import Origin

from hermes_site import access
from hermes_site.access import LoginThrottle, login_token
from tests.daphne import Daphne, Http, start_daphne


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(access, "THROTTLE", LoginThrottle(burst=10, seconds_per_try=2.0, clock=fake))
    return fake


@pytest.mark.django_db
def test_wrong_tokens_are_throttled_with_retry_after_and_logged(client, clock, caplog):
    caplog.set_level(logging.WARNING, logger="hermes.access")
    for _ in range(10):
        assert client.get("/login?token=wrong").status_code == 403
    assert sum("wrong token" in r.getMessage() for r in caplog.records) == 10
    resp = client.get("/login?token=wrong")
    assert resp.status_code == 429 and resp["Retry-After"] == "2"
    assert "Too many wrong tokens" in resp.content.decode()
    assert any("too many wrong tokens" in r.getMessage() for r in caplog.records)
    # The right token is compared first: no number of wrong tries locks the owner out.
    resp = client.post("/login", {"token": login_token()})
    assert resp.status_code == 302 and client.get("/").status_code == 200
    clock.now += 2.0
    assert client.get("/login?token=wrong").status_code == 403  # the bucket refills with time


@pytest.mark.django_db
def test_the_login_page_itself_is_never_throttled(client, clock):
    for _ in range(11):
        client.get("/login?token=wrong")
    assert client.get("/login").status_code == 200


@pytest.mark.django_db
def test_logout_ends_every_session_of_the_dashboard(client, django_user_model):
    from django.test import Client

    other = Client()  # another browser
    for c in (client, other):
        assert c.get(f"/login?token={login_token()}").status_code == 302
        assert c.get("/memory/").status_code == 200
    resp = client.post("/logout")
    assert resp.status_code == 302 and resp["Location"] == "/login?logged_out=1"
    assert "logged out everywhere" in client.get("/login?logged_out=1").content.decode()
    for c in (client, other):
        assert c.get("/memory/").status_code == 302


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
    with start_daphne(tmp_path_factory.mktemp("access-hardening")) as s:
        yield s


@pytest.mark.slow  # against a daphne subprocess
def test_the_access_log_never_shows_the_login_token(server: Daphne):
    owner = Http(server.port)
    owner.login(server.token)
    assert owner.get("/login?token=not-the-token").status == 403
    log = server.log()
    assert "/login?token=[redacted]" in log
    assert server.token not in log and "not-the-token" not in log


@pytest.mark.slow  # against a daphne subprocess
def test_logout_closes_open_sockets_and_other_browsers(server: Daphne):
    first, second = Http(server.port), Http(server.port)
    first.login(server.token)
    second.login(server.token)

    async def run() -> tuple[int | None, str]:
        async with ws_connect(
            f"ws://127.0.0.1:{server.port}/ws/notify/",
            origin=Origin(server.origin),
            additional_headers={"Cookie": f"sessionid={second.cookies['sessionid']}"},
            open_timeout=10,
        ) as ws:
            await ws.send(json.dumps({"type": "ping"}))
            assert json.loads(await asyncio.wait_for(ws.recv(), 10)) == {"type": "pong"}
            resp = await asyncio.to_thread(first.csrf_post, "/logout")
            assert resp.status == 302 and resp.location == "/login?logged_out=1"
            with pytest.raises(ConnectionClosed):
                await asyncio.wait_for(ws.recv(), 10)
            return ws.close_code, ws.close_reason or ""

    code, reason = asyncio.run(run())
    assert code == 4401 and "Logged out" in reason
    assert second.get("/memory/").status == 302
    assert first.get("/memory/").status == 302


@pytest.mark.django_db
def test_failures_are_counted_per_client(client, clock):
    for _ in range(11):
        client.get("/login?token=wrong", REMOTE_ADDR="127.0.0.2")
    assert client.get("/login?token=wrong", REMOTE_ADDR="127.0.0.2").status_code == 429
    assert client.get("/login?token=wrong", REMOTE_ADDR="127.0.0.1").status_code == 403  # another client's tries


@pytest.mark.django_db
@pytest.mark.parametrize(
    "headers",
    [
        {"HTTP_SEC_FETCH_SITE": "cross-site"},
        {"HTTP_ORIGIN": "https://evil.example"},
        {"HTTP_ORIGIN": "null"},
        {"HTTP_REFERER": "https://evil.example/page.html"},
    ],
)
def test_cross_site_logins_are_refused_before_they_count(client, clock, headers):
    for _ in range(30):
        resp = client.get("/login?token=x", **headers)
        assert resp.status_code == 403 and "another site" in resp.content.decode()
    assert client.get("/login?token=wrong").status_code == 403  # the owner's tries are all still there
    assert client.get(f"/login?token={login_token()}", **headers).status_code == 403  # not even the right one
    assert client.get(f"/login?token={login_token()}").status_code == 302


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("next_value", "landing"),
    [
        ("/memory/?q=a&b=c", "/memory/?q=a&b=c"),
        ("//evil.example/", "/"),
        ("https://evil.example/", "/"),
        ("/\\evil.example", "/"),
        ("memory", "/"),
    ],
)
def test_next_is_only_a_same_origin_path(client, next_value, landing):
    from urllib.parse import urlencode

    resp = client.get(f"/login?{urlencode({'token': login_token(), 'next': next_value})}")
    assert resp.status_code == 302 and resp["Location"] == landing


@pytest.mark.django_db
def test_the_redirect_to_login_url_encodes_the_path(client):
    from urllib.parse import parse_qs, urlsplit

    resp = client.get("/a%26token=x")
    assert resp.status_code == 302
    query = parse_qs(urlsplit(resp["Location"]).query)
    assert list(query) == ["next"] and query["next"][0].startswith("/a&token")  # the path whole, no token= try
