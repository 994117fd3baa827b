"""Stopping a model request at any moment, including while the server has not answered yet.

A slow or reasoning model can take many seconds before its first byte, and that is when people
press Stop. The HTTP call blocks in a socket read the interrupt flag cannot reach, so the request
is sent from a helper thread while the turn's thread waits on the flag; on Stop the request's
socket is shut down, which wakes the read and tells the server the connection is gone (it
stops generating instead of spending tokens on an answer nobody reads).

The request is found in the shared connection pool by a marker header only it carries: the
pool is shared by every chat of the process, and only this request's connection may be cut.
"""

from __future__ import annotations

import logging
import socket
import threading
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

MARKER_HEADER = "X-Hermes-Request"
POLL_SECONDS = 0.05  # how often a stopped request's connection is looked for (retries included)


class Stopped(Exception):
    """The request was interrupted before the server answered."""


def new_marker() -> str:
    return uuid.uuid4().hex


def _pool_requests(http_client: Any) -> list[Any]:
    # httpx client -> transport -> connection pool -> its in-flight requests (private
    # attributes: when a release renames them, Stop still ends the turn, only later).
    pool = getattr(getattr(http_client, "_transport", None), "_pool", None)
    return list(getattr(pool, "_requests", None) or [])


def _socket_of(pool_request: Any) -> socket.socket | None:
    connection = getattr(pool_request, "connection", None)
    inner = getattr(connection, "_connection", None)
    stream = getattr(inner, "_network_stream", None)
    if stream is None:
        return None
    sock = stream.get_extra_info("socket")
    return sock if isinstance(sock, socket.socket) else None


def shut(sock: socket.socket | None) -> None:
    if sock is None:
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass  # already closed by the other side: nothing left to cut


def cut_request(http_client: Any, marker: str) -> bool:
    """Shut the connection carrying the request marked `marker`; False if none is in flight."""
    wanted = (MARKER_HEADER.lower().encode(), marker.encode())
    for pending in _pool_requests(http_client):
        headers = getattr(getattr(pending, "request", None), "headers", None) or []
        if any((bytes(k).lower(), bytes(v)) == wanted for k, v in headers):
            sock = _socket_of(pending)
            shut(sock)
            return sock is not None
    return False


def send_interruptibly(
    send: Callable[[], T], interrupt: threading.Event, http_client: Any, marker: str, on_late: Callable[[T], None]
) -> T:
    """`send()` (which puts `marker` on its request) run so that setting `interrupt` ends the
    wait at once with `Stopped`. `on_late` receives a result that arrives after the stop (to
    close it); errors after a stop are dropped, the person asked for the stop."""
    box: dict[str, Any] = {}
    finished = threading.Event()

    def run() -> None:
        try:
            box["value"] = send()
        except Exception as exc:  # noqa: BLE001 - handed to the waiting thread and raised there
            box["error"] = exc
        finished.set()

    worker = threading.Thread(target=run, name="model-request", daemon=True)
    worker.start()
    while not finished.wait(POLL_SECONDS):
        if interrupt.is_set():
            threading.Thread(
                target=_cut_until_done,
                args=(http_client, marker, finished, box, on_late),
                name="model-request-stop",
                daemon=True,
            ).start()
            raise Stopped()
    if "error" in box:
        raise box["error"]
    return box["value"]


def _cut_until_done(
    http_client: Any, marker: str, finished: threading.Event, box: dict[str, Any], on_late: Callable[[Any], None]
) -> None:
    # The client may retry a cut request (it looks like a dropped connection): cut each attempt.
    while not finished.wait(POLL_SECONDS):
        cut_request(http_client, marker)
    if "value" in box:
        on_late(box["value"])
    elif "error" in box:
        log.debug("model request ended after Stop: %s", box["error"])


def watch_response(response: Any, interrupt: threading.Event, done: threading.Event) -> None:
    """While a reply is read, Stop shuts its socket so a read waiting for the next chunk returns."""

    def watch() -> None:
        while not done.is_set():
            if interrupt.wait(POLL_SECONDS * 4):
                stream = (getattr(response, "extensions", None) or {}).get("network_stream")
                sock = stream.get_extra_info("socket") if stream is not None else None
                shut(sock if isinstance(sock, socket.socket) else None)
                return

    threading.Thread(target=watch, name="model-reply-stop", daemon=True).start()
