"""Local-first access control (issue 8): a login token printed with the URL, like Jupyter.

The token is generated on first run and stored in HERMES_HOME (mode 600). Visiting
`/login?token=…` (or posting it on the login page) logs the browser in as the local owner —
a Django user, so the admin and the websocket's AuthMiddlewareStack see the same identity.
Everything except the login page and static files requires that session.
"""

from __future__ import annotations

import hmac
import secrets
from collections.abc import Callable

from django.conf import settings
from django.contrib.auth import get_user_model, login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_http_methods

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


@require_http_methods(["GET", "POST"])
def login_view(request: HttpRequest) -> HttpResponse:
    token = request.POST.get("token") if request.method == "POST" else request.GET.get("token")
    error = ""
    if token:
        if hmac.compare_digest(token.strip(), login_token()):
            login(request, _owner(), backend="django.contrib.auth.backends.ModelBackend")
            nxt = request.GET.get("next") or request.POST.get("next") or "/"
            if not url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
                nxt = "/"
            return HttpResponseRedirect(nxt)
        error = "That token is not right. Use the link printed when the dashboard started."
    return render(
        request, "login.html", {"error": error, "next": request.GET.get("next", "")}, status=403 if token else 200
    )


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
