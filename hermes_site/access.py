"""Local-first access control (docs/DECISIONS.md, record 13): a login token printed with the URL, like Jupyter.

The token is generated on first run and stored in HERMES_HOME (mode 600). Visiting
`/login?token=…` (or posting it on the login page) logs the browser in as the local owner —
a Django user, so the admin and the websocket's AuthMiddlewareStack see the same identity.
Everything except the login page, static files and a chat's share links (`/s/<token>/`, whose
token the view checks) requires that session.

The right token always logs in (compared first, in constant time). Wrong tokens are throttled
per client (`LoginThrottle`: a few free tries, then one every couple of seconds, answered 429
with Retry-After) and logged; a login a page on another site made the browser send is refused
before it counts (`_foreign`), so no page can lock the owner out. `/logout` ends every session of the
dashboard (all browsers, all tabs) and closes their open websockets.
"""

from __future__ import annotations

import hmac
import logging
import math
import re
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlencode, urlsplit

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django import forms
from django.conf import settings
from django.contrib.auth import get_user_model, login, logout
from django.contrib.sessions.models import Session
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.views.decorators.http import require_http_methods, require_POST

from agent.chat.socket_access import SESSIONS_GROUP
from foundation.fileio import create_private, exposed

log = logging.getLogger("hermes.access")
OWNER_USERNAME = "owner"
PUBLIC_PREFIXES = ("/login", "/static/", "/favicon.ico")
# A chat's read-only share page and its images (agent/chat/sharing.py): the token in the address
# is the credential, checked by the view. Only these exact shapes skip the login; nothing else
# under /s/, and no other page, becomes public.
PUBLIC_SHARE = re.compile(r"/s/[A-Za-z0-9_-]{43}/(?:images/[0-9]{1,18}/)?")


def login_token() -> str:
    path = settings.HERMES_HOME / "login_token"
    if not path.exists():
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # first use of a fresh home
        create_private(path, secrets.token_urlsafe(24))  # 0600 from the start, never chmod-ed after
    return path.read_text(encoding="utf-8").strip()


# What a local account could read in a home it can enter: every conversation and the session
# keys (the database), the login token, the key that signs session cookies, the model's API key.
PRIVATE_FILES = (
    "dashboard.sqlite3", "dashboard.sqlite3-wal", "dashboard.sqlite3-shm", "login_token", "secret_key", "api_key",
)  # fmt: skip


def exposed_home_warning(home: Path) -> str:
    """One warning naming what other local accounts can read, and the chmod that fixes it ("" if none).

    A home the dashboard creates is private from the start; one made earlier (by Hermes, an older
    version, a umask of 022) may not be. Skill folders are left as Hermes makes them."""
    files = exposed([home / name for name in PRIVATE_FILES])
    folder = exposed([home])
    if not files and not folder:
        return ""
    named = ", ".join(str(p) for p in folder + files)
    fix = " && ".join(
        ([f"chmod 700 {home}"] if folder else []) + ([f"chmod 600 {' '.join(map(str, files))}"] if files else [])
    )
    return f"warning: other local accounts can read or enter {named}. To keep them private run: {fix}"


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
    """Token buckets of failed logins, one per client (its address), a few hundred at most.

    The right token is checked before the bucket (in constant time), so no amount of failed
    tries, by anyone, locks the owner out; a wrong one costs a try, and an empty bucket answers
    429 without comparing. Cross-site requests never reach it (`_foreign`).
    """

    MAX_CLIENTS = 256

    def __init__(self, burst: int = 10, seconds_per_try: float = 2.0, clock: Callable[[], float] = time.monotonic):
        self.burst = burst
        self.seconds_per_try = seconds_per_try
        self.clock = clock
        self._buckets: OrderedDict[str, tuple[float, float]] = OrderedDict()  # client -> (tries, stamp)
        self._lock = threading.Lock()

    def _tries(self, client: str) -> float:
        now = self.clock()
        tries, stamp = self._buckets.get(client, (float(self.burst), now))
        return min(self.burst, tries + (now - stamp) / self.seconds_per_try)

    def wait(self, client: str = "") -> int:
        """Seconds until `client`'s next attempt is allowed (0: now)."""
        with self._lock:
            tries = self._tries(client)
            return 0 if tries >= 1 else math.ceil((1 - tries) * self.seconds_per_try)

    def failed(self, client: str = "") -> None:
        with self._lock:
            self._buckets[client] = (max(0.0, self._tries(client) - 1), self.clock())
            self._buckets.move_to_end(client)
            while len(self._buckets) > self.MAX_CLIENTS:
                self._buckets.popitem(last=False)


THROTTLE = LoginThrottle()


def _client(request: HttpRequest) -> str:
    return str(request.META.get("REMOTE_ADDR") or "unknown")


def _foreign(request: HttpRequest) -> str:
    """Why a login attempt comes from another site ("" when it does not).

    A page elsewhere can make the owner's browser load `/login?token=x` (an <img>, a form); the
    browser says where the request came from, and such a request is refused without counting,
    so it can neither spend the owner's tries nor log the browser in to anything.
    """
    site = request.headers.get("Sec-Fetch-Site", "")
    if site in ("cross-site", "same-site"):
        return f"Sec-Fetch-Site: {site}"
    own = f"{request.scheme}://{request.get_host()}"
    origin = request.headers.get("Origin")
    if origin is not None and origin != own:
        return f"Origin {origin}"
    referer = request.headers.get("Referer")
    if referer:
        parts = urlsplit(referer)
        if f"{parts.scheme}://{parts.netloc}" != own:
            return f"Referer from {parts.scheme}://{parts.netloc}"
    return ""


def safe_next(value: str | None) -> str:
    """A same-origin path to go to after logging in: "/" unless `value` is one."""
    value = (value or "").strip()
    if not value.startswith("/") or value.startswith(("//", "/\\")) or any(ch in value for ch in "\r\n\\"):
        return "/"
    parts = urlsplit(value)
    return value if not parts.scheme and not parts.netloc else "/"


def _throttled(request: HttpRequest, wait: int) -> HttpResponse:
    log.warning("Login attempt from %s refused: too many wrong tokens; retry in %d s", _client(request), wait)
    error = f"Too many wrong tokens. Wait {wait} s, then use the link printed when the dashboard started."
    resp = render(request, "login.html", {"error": error, "next": safe_next(request.GET.get("next"))}, status=429)
    resp["Retry-After"] = str(wait)
    return resp


class LoginForm(forms.Form):
    """The token, pasted (POST) or in the printed link (GET), and where to go next. Any text is a
    well-formed token; whether it is the right one is the view's constant-time comparison."""

    token = forms.CharField(required=False, strip=True)
    next = forms.CharField(required=False)


@require_http_methods(["GET", "POST"])
def login_view(request: HttpRequest) -> HttpResponse:
    form = LoginForm(request.POST if request.method == "POST" else request.GET)
    form.is_valid()  # nothing to refuse: two optional texts
    token = form.cleaned_data.get("token", "")
    nxt = safe_next(request.GET.get("next") or form.cleaned_data.get("next"))
    error = ""
    if token and (why := _foreign(request)):
        log.warning("Login attempt from %s refused: it came from another site (%s)", _client(request), why)
        error = "This login came from another site. Open the link printed when the dashboard started."
        return render(request, "login.html", {"error": error, "next": nxt}, status=403)
    if token:
        # Compared first, in constant time: the right token logs in however many tries failed.
        if hmac.compare_digest(token.encode(), login_token().encode()):
            login(request, _owner(), backend="django.contrib.auth.backends.ModelBackend")
            return HttpResponseRedirect(nxt)
        if wait := THROTTLE.wait(_client(request)):
            return _throttled(request, wait)
        THROTTLE.failed(_client(request))
        log.warning("Login attempt from %s refused: wrong token", _client(request))
        error = "That token is not right. Use the link printed when the dashboard started."
    ctx = {"error": error, "next": nxt if nxt != "/" else "", "logged_out": "logged_out" in request.GET}
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
        public = request.path.startswith(PUBLIC_PREFIXES) or PUBLIC_SHARE.fullmatch(request.path)
        if not public and not request.user.is_authenticated:
            if request.headers.get("HX-Request"):
                resp = HttpResponse("Login required", status=401)
                resp["HX-Redirect"] = "/login"
                return resp
            return HttpResponseRedirect(f"/login?{urlencode({'next': request.get_full_path()})}")
        return self.get_response(request)
