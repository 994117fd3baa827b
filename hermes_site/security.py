"""Security headers: a Content-Security-Policy without inline scripts, and friends."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

CSP = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",
        "connect-src 'self'",
        "font-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    ]
)


class SecurityHeadersMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.setdefault("Content-Security-Policy", CSP)
        response.setdefault("Referrer-Policy", "same-origin")
        response.setdefault("X-Content-Type-Options", "nosniff")
        return response


# Requests over these limits are refused before anything reads the body: daphne stops reading a
# body once it passes its path's limit (hermes_site/websocket_server.py), and this middleware refuses
# a declared size over it before the CSRF check would parse or spool the body. Import uploads get
# their own cap: the archive limit plus a little room for the other form fields.
_MB = 1024 * 1024
LARGE_BODY_PATHS = {
    "/transfer/import/": (51 * _MB, "The upload is larger than 50 MB. Nothing was imported."),
    # A chat attachment: a PDF of up to 10 MB (agent/chat/attachments.py) and the form's other field.
    "/chat/attach/": (10 * _MB + 64 * 1024, "The file is larger than 10 MB. It was not attached."),
}
DEFAULT_BODY_LIMIT = 6 * _MB


def body_limit(path: str) -> tuple[int, str]:
    """The most bytes a request body to `path` may have, and the sentence that refuses more."""
    return LARGE_BODY_PATHS.get(
        path, (DEFAULT_BODY_LIMIT, f"The request is larger than {DEFAULT_BODY_LIMIT // _MB} MB. Nothing was changed.")
    )


class RequestSizeLimitMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return HttpResponse("The request's Content-Length is not a number.", status=400, content_type="text/plain")
        limit, message = body_limit(request.path)
        if declared > limit:
            return HttpResponse(message, status=413, content_type="text/plain; charset=utf-8")
        return self.get_response(request)
