"""Local-first access control (docs/DECISIONS.md, record 13): a login token printed with the URL, like Jupyter.

The token is generated on first run and stored in HERMES_HOME (mode 600). Visiting
`/login?token=…` (or posting it on the login page) logs the browser in as the local owner —
a Django user, so the admin and the websocket's AuthMiddlewareStack see the same identity.
Everything except the login page and static files requires that session.

Wrong tokens are throttled (`LoginThrottle`: a few free tries, then one every couple of
seconds, answered 429 with Retry-After) and logged. `/logout` ends every session of the
dashboard (all browsers, all tabs) and closes their open websockets.
"""

from __future__ import annotations

import hmac
import logging
import math
import secrets
import threading
import time
from collections.abc import Callable

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth import get_user_model, login, logout
from django.contrib.sessions.models import Session
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods, require_POST

log = logging.getLogger("hermes.access")
# Every open websocket joins this group; a logout tells them all to close.
SESSIONS_GROUP = "auth.sessions"

OWNER_USERNAME = "owner"
PUBLIC_PREFIXES = ("/login", "/static/", "/favicon.ico")


def login_token() -> str:
    path = settings.HERMES_HOME / "login_token"
    if not path.exists():
        path.write_text(secrets.token_urlsafe(24), encoding="utf-8")
        path.chmod(0o600)
    return path.read_text(encoding="utf-8").strip()


def login_url(host: str, port: int) -> str:
    shown = "127.0.0.1" if host in ("0.0.0.0", "") else host
    return f"http://{shown}:{port}/login?token={login_token()}"


def _owner():  # type: ignore[no-untyped-def]
    User = get_user_model()
    user, created = User.objects.get_or_create(
        username=OWNER_USERNAME, defaults={"is_staff": True, "is_superuser": True}
    )
    if created:
        user.set_unusable_password()
        user.save()
    return user


class LoginThrottle:
    """A token bucket of failed logins, shared by every client (they are all on loopback).

    While it is empty every attempt is refused unchecked, the right token too: otherwise the
    answers would still tell a guesser which token is right at full speed.
    """

    def __init__(self, burst: int = 10, seconds_per_try: float = 2.0, clock: Callable[[], float] = time.monotonic):
        self.burst = burst
        self.seconds_per_try = seconds_per_try
        self.clock = clock
        self._tries = float(burst)
        self._stamp = clock()
        self._lock = threading.Lock()

    def _refill(self) -> None:
        now = self.clock()
        self._tries = min(self.burst, self._tries + (now - self._stamp) / self.seconds_per_try)
        self._stamp = now

    def wait(self) -> int:
        """Seconds until the next attempt is allowed (0: now)."""
        with self._lock:
            self._refill()
            return 0 if self._tries >= 1 else math.ceil((1 - self._tries) * self.seconds_per_try)

    def failed(self) -> None:
        with self._lock:
            self._refill()
            self._tries = max(0.0, self._tries - 1)


THROTTLE = LoginThrottle()


def _client(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def _throttled(request: HttpRequest, wait: int) -> HttpResponse:
    log.warning("Login attempt from %s refused: too many wrong tokens; retry in %d s", _client(request), wait)
    error = f"Too many wrong tokens. Wait {wait} s, then use the link printed when the dashboard started."
    resp = render(request, "login.html", {"error": error, "next": request.GET.get("next", "")}, status=429)
    resp["Retry-After"] = str(wait)
    return resp


@require_http_methods(["GET", "POST"])
def login_view(request: HttpRequest) -> HttpResponse:
    token = request.POST.get("token") if request.method == "POST" else request.GET.get("token")
    error = ""
    if token and (wait := THROTTLE.wait()):
        return _throttled(request, wait)
    if token:
        if hmac.compare_digest(token.strip(), login_token()):
            login(request, _owner(), backend="django.contrib.auth.backends.ModelBackend")
            nxt = request.GET.get("next") or request.POST.get("next") or "/"
            if not url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
                nxt = "/"
            return HttpResponseRedirect(nxt)
        THROTTLE.failed()
        log.warning("Login attempt from %s refused: wrong token", _client(request))
        error = "That token is not right. Use the link printed when the dashboard started."
    ctx = {"error": error, "next": request.GET.get("next", ""), "logged_out": "logged_out" in request.GET}
    return render(request, "login.html", ctx, status=403 if token else 200)


@require_POST
def logout_view(request: HttpRequest) -> HttpResponse:
    """End the dashboard's session everywhere: every stored session, and every open websocket."""
    logout(request)
    # One owner, so every session is the owner's: a cookie copied to another browser (or left
    # in one) stops working too.
    Session.objects.all().delete()
    layer = get_channel_layer()
    if layer is not None:
        async_to_sync(layer.group_send)(SESSIONS_GROUP, {"type": "auth.logout"})
    log.info("Logged out from %s; every session ended", _client(request))
    return HttpResponseRedirect("/login?logged_out=1")


class TokenAuthMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(PUBLIC_PREFIXES) and not request.user.is_authenticated:
            if request.headers.get("HX-Request"):
                resp = HttpResponse("Login required", status=401)
                resp["HX-Redirect"] = "/login"
                return resp
            return HttpResponseRedirect(f"/login?next={request.path}")
        return self.get_response(request)
