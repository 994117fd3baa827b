"""Run daphne with the project's websocket limits: `python -m hermes_site.websocket_server <daphne args>`.

`manage.py serve` and the tests start daphne through this module so that
- daphne's frame and message caps derive from the same setting as the chat socket's own limit
  (`agent.max_message_chars`): a frame the consumer would refuse with a message always reaches
  it, and only a frame far past that is stopped by daphne;
- a frame daphne stops is answered with a close frame (1009) whose reason says what happened,
  instead of autobahn's default of dropping the TCP connection (a bare reset in the browser);
- a consumer's `close(code, reason)` sends its reason (daphne 4 passes only the code);
- the access log never shows the login token (`GET /login?token=[redacted]`);
- a request body is refused with 413 as soon as it passes its path's limit (`body_limit` in
  hermes_site/security.py), while it arrives: daphne would otherwise take the whole body (to a
  file, then all of it into the application's queue) before Django's size check ever ran.

`manage.py serve` adds two things for a person at a terminal: the login link is printed once the
port listens (so it is the last line on screen and already works when clicked), and `--quiet`
turns daphne's request log and start-up notes off (warnings and errors still show).

Daphne builds its HTTP and websocket factories inside `Server.run()` and its access logger inside
the command line, so those three classes are swapped on the `daphne.server` and `daphne.cli`
modules before the command line runs; nothing else in daphne is changed.
"""

from __future__ import annotations

import io
import os
import re
import sys
from typing import Any
from urllib.parse import unquote

from daphne import cli as daphne_cli
from daphne import server as daphne_server
from daphne.access import AccessLogGenerator
from daphne.cli import CommandLineInterface
from daphne.http_protocol import HTTPFactory, WebRequest
from daphne.ws_protocol import WebSocketFactory, WebSocketProtocol
from twisted.internet.protocol import Protocol

from agent.chat.ratelimit import max_frame_chars
from foundation import config as hermes_config
from hermes_site.security import body_limit

MESSAGE_TOO_BIG = 1009
_SECRET_PARAM = re.compile(r"([?&](?:token|csrfmiddlewaretoken)=)[^&#\s]*", re.IGNORECASE)
_UTF8_MAX = 4  # bytes per character at most: the byte cap never cuts below the character cap


def frame_limit_bytes() -> int:
    """The largest frame daphne accepts: the chat socket's own frame limit, in UTF-8 bytes."""
    chars = hermes_config.get().agent.max_message_chars
    return max_frame_chars(chars) * _UTF8_MAX


class HermesWebSocketProtocol(WebSocketProtocol):
    def _max_message_size_exceeded(self, msg_size: int, max_msg_size: int, reason: str) -> None:
        # Close reasons are at most 123 bytes; this one says what the person can do about it.
        self._fail_connection(
            MESSAGE_TOO_BIG, f"Frame too large: {msg_size:,} bytes (limit {max_msg_size:,}). Nothing was sent."
        )

    def handle_reply(self, message: dict[str, Any]) -> None:
        if message.get("type") == "websocket.close" and self.state != self.STATE_CONNECTING and message.get("reason"):
            reason = str(message["reason"]).encode("utf-8")[:123].decode("utf-8", "ignore")  # the frame holds 123 bytes
            self.sendClose(code=message.get("code") or 1000, reason=reason)
            return
        super().handle_reply(message)


def redact(path: str) -> str:
    """A request path as the access log may show it: the login token replaced."""
    return _SECRET_PARAM.sub(r"\1[redacted]", path)


class RedactingAccessLog(AccessLogGenerator):
    def __call__(self, protocol: str, action: str, details: dict[str, Any]) -> None:
        if isinstance(details.get("path"), str):
            details = {**details, "path": redact(details["path"])}
        super().__call__(protocol, action, details)


class HermesWebSocketFactory(WebSocketFactory):
    protocol = HermesWebSocketProtocol

    def setProtocolOptions(self, **options: Any) -> None:
        super().setProtocolOptions(failByDrop=False, **options)


class CappedRequest(WebRequest):
    """A request whose body is counted as it arrives and refused once past its path's limit.

    Twisted hands the body to `gotLength` (the declared size, or None when chunked) and then to
    `handleContentChunk` piece by piece; the request stores every piece until the end. Past the
    limit this answers 413 with the limit's sentence at once and drops the rest of the body: no
    more than the limit is ever kept, whatever the client goes on sending. The connection stays
    open while the client finishes sending (up to LINGER more bytes), because a client cut off
    mid-upload sees a reset, not the sentence; past that it is closed.
    """

    LINGER = 64 * 1024 * 1024
    _limit = 0
    _seen = 0
    _refused = False

    def gotLength(self, length: int | None) -> None:
        # The channel has parsed the request line but not yet given it to the request.
        raw = bytes(getattr(self.channel, "_path", b"") or b"")
        self._limit, self._message = body_limit(unquote(raw.split(b"?", 1)[0].decode("latin-1")))
        if length is not None and length > self._limit:
            self.content = io.BytesIO()  # the request's own code expects one; nothing is written to it
            self._refuse()
            return
        super().gotLength(length)

    def handleContentChunk(self, data: bytes) -> None:
        self._seen += len(data)
        if self._refused:
            if self._seen > self._limit + self.LINGER:
                self.channel.loseConnection()
            return
        if self._seen > self._limit:
            self._refuse()
            return
        super().handleContentChunk(data)

    def requestReceived(self, command: bytes, path: bytes, version: bytes) -> None:
        if self._refused:  # the refused body ended: its answer is sent, and it said "close"
            self.channel.loseConnection()
            return
        super().requestReceived(command, path, version)

    def _refuse(self) -> None:
        self._refused = True
        body = self._message.encode("utf-8")
        head = (
            "HTTP/1.1 413 Content Too Large\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nX-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n"
        )
        if self.channel.transport is not None:
            self.channel.transport.write(head.encode("ascii") + body)


class CappedHTTPFactory(HTTPFactory):
    def buildProtocol(self, addr: Any) -> Protocol | None:
        protocol = super().buildProtocol(addr)
        if protocol is not None:
            protocol.requestFactory = CappedRequest
        return protocol


class AnnouncingServer(daphne_server.Server):
    """Prints a line (the login link) when the first port listens: a link shown earlier could be
    refused, and shown last it stays in view."""

    message = ""

    def listen_success(self, port: Any) -> None:
        super().listen_success(port)
        if self.message:
            print(self.message, flush=True)
            self.message = ""


# The line to print once listening, from `manage.py serve` (which knows the link), through the
# environment rather than the command line: the process list shows a command line to every user.
ANNOUNCE_ENV = "HERMES_ANNOUNCE_WHEN_LISTENING"
QUIET = "--quiet"


def command(host: str, port: int, *, quiet: bool = False) -> list[str]:
    """The command line that serves the dashboard (`manage.py serve`, and the tests' daphne)."""
    return [sys.executable, "-m", "hermes_site.websocket_server", *[QUIET] * quiet, "-b", host, "-p", str(port),
            "hermes_site.asgi:application"]  # fmt: skip


def main(argv: list[str]) -> None:
    daphne_server.WebSocketFactory = HermesWebSocketFactory
    daphne_server.HTTPFactory = CappedHTTPFactory
    daphne_cli.AccessLogGenerator = RedactingAccessLog
    cli = CommandLineInterface()
    message = os.environ.pop(ANNOUNCE_ENV, "")  # not passed on to the processes the server starts
    if message:
        cli.server_class = type("Announcing", (AnnouncingServer,), {"message": message})
    # Verbosity 0: no access log and no start-up notes, only warnings and errors.
    quiet = ["-v", "0"] * (QUIET in argv)
    rest = [arg for arg in argv if arg != QUIET]
    limit = str(frame_limit_bytes())
    cli.run(["--websocket-max-frame-size", limit, "--websocket-max-message-size", limit, *quiet, *rest])


if __name__ == "__main__":
    main(sys.argv[1:])
