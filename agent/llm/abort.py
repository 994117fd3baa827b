"""Stopping a model request at any moment, including while the server has not answered yet.

A slow or reasoning model can take many seconds before its first byte, and that is when people
press Stop. The HTTP call blocks in a socket read the interrupt flag cannot reach, so the request
is sent from a helper thread while the turn's thread waits on the flag; on Stop the request's
socket is shut down, which wakes the read and tells the server the connection is gone (it
stops generating instead of spending tokens on an answer nobody reads).

The request is found in the shared connection pool by a marker header only it carries: the
pool is shared by every chat of the process, and only this request's connection may be cut.

A turn's Stop flag is a `StopSignal`: setting it calls back whoever waits on what it cannot see
(the helper thread's answer, a socket read), so nothing polls it. On a shared virtual machine a
sleeping thread's every wake costs 0.2-0.3 ms of CPU however little it then does, and polling the
flag while a reply streamed (every 0.2 s) and while the server had not answered yet (every 0.05
s) cost several milliseconds a turn; so did starting a thread for every request, which a pool
of request threads saves. A plain `threading.Event` still works, polled as before.
"""

from __future__ import annotations

import logging
import queue
import socket
import threading
import uuid
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

MARKER_HEADER = "X-Hermes-Request"
POLL_SECONDS = 0.05  # how often a stopped request's connection is looked for (retries included)


# Idle request threads kept for the next request; more are started when all are busy.
KEEP_IDLE = 32


class _RequestThreads:
    """Daemon threads that send requests and wait for their first byte, kept for the next one
    (a pool whose threads never hold up the process's exit, as an executor's would)."""

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[tuple[Callable[[], None], Callable[[], None]]] = queue.SimpleQueue()
        self._idle = 0
        self._lock = threading.Lock()

    def run(self, job: Callable[[], None], then: Callable[[], None]) -> None:
        """Run `job`, then `then` (neither raises), on an idle thread or a new one. The thread
        counts as idle before `then` runs, so a request that `then` lets go on finds it."""
        with self._lock:
            start = self._idle == 0
            if not start:
                self._idle -= 1  # an idle thread will take it
        self._work.put((job, then))
        if start:
            threading.Thread(target=self._serve, name="model-request", daemon=True).start()

    def _serve(self) -> None:
        while True:
            job, then = self._work.get()
            job()
            with self._lock:
                keep = self._idle < KEEP_IDLE
                self._idle += keep
            then()
            if not keep:
                return


_requests = _RequestThreads()


class Stopped(Exception):
    """The request was interrupted before the server answered."""


class StopSignal(threading.Event):
    """A Stop flag that also calls back those waiting on something it cannot wake by itself."""

    def __init__(self) -> None:
        super().__init__()
        self._callbacks: list[Callable[[], None]] = []
        self._callbacks_lock = threading.Lock()

    def set(self) -> None:
        with self._callbacks_lock:
            super().set()
            callbacks, self._callbacks = self._callbacks, []
        for callback in callbacks:
            callback()

    def on_set(self, callback: Callable[[], None]) -> Callable[[], None]:
        """Call `callback` once when the flag is set (at once if it is); returns the function
        that cancels it."""
        with self._callbacks_lock:
            if not self.is_set():
                self._callbacks.append(callback)
                return lambda: self._cancel(callback)
        callback()
        return lambda: None

    def _cancel(self, callback: Callable[[], None]) -> None:
        with self._callbacks_lock:
            if callback in self._callbacks:
                self._callbacks.remove(callback)


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
    woken = threading.Event()  # the answer came, or Stop

    def run() -> None:
        try:
            box["value"] = send()
        except Exception as exc:  # noqa: BLE001 - handed to the waiting thread and raised there
            box["error"] = exc

    def answered() -> None:
        finished.set()
        woken.set()

    _requests.run(run, answered)
    if _stopped_first(interrupt, finished, woken):
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


def _stopped_first(interrupt: threading.Event, finished: threading.Event, woken: threading.Event) -> bool:
    """Wait for the answer or Stop; True when Stop came first."""
    if isinstance(interrupt, StopSignal):
        cancel = interrupt.on_set(woken.set)
        woken.wait()
        cancel()
        return not finished.is_set()
    while not finished.wait(POLL_SECONDS):  # a plain flag cannot call back: look at it now and then
        if interrupt.is_set():
            return True
    return False


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


def watch_response(response: Any, interrupt: threading.Event) -> Callable[[], None]:
    """While a reply is read, Stop shuts its socket so a read waiting for the next chunk returns.
    Returns the function to call once the reply is read."""

    def cut() -> None:
        stream = (getattr(response, "extensions", None) or {}).get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        shut(sock if isinstance(sock, socket.socket) else None)

    if isinstance(interrupt, StopSignal):
        return interrupt.on_set(cut)
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            if interrupt.wait(POLL_SECONDS * 4):
                cut()
                return

    threading.Thread(target=watch, name="model-reply-stop", daemon=True).start()
    return done.set
