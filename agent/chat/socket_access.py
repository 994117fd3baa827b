"""Who may hold a chat socket: pages of this very origin, until the dashboard logs out."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

# Every open websocket joins this group; a logout (the site's logout view) tells them all to close.
SESSIONS_GROUP = "auth.sessions"


def _header(scope: Mapping[str, Any], name: bytes) -> str:
    for key, value in scope.get("headers") or []:
        if key.lower() == name:
            return bytes(value).decode("latin-1").strip()
    return ""


def same_origin(scope: Mapping[str, Any]) -> bool:
    """Does a websocket handshake come from a page of this very origin (scheme, host AND port)?

    Channels' AllowedHostsOriginValidator compares only the host name with ALLOWED_HOSTS, so a
    page on another local port (http://127.0.0.1:9999: another origin, but the same *site*, so
    the browser sends our session cookie along) would pass it and could drive the chat. The
    Origin must name exactly the scheme and host:port this request was sent to.
    """
    origin = urlsplit(_header(scope, b"origin").lower())
    host = _header(scope, b"host").lower()
    scheme = "https" if scope.get("scheme") == "wss" else "http"
    return bool(host) and origin.scheme == scheme and origin.netloc == host
