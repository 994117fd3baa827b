"""A request body is refused while it arrives, once past its path's limit: a 512 MB POST streamed to
/login leaves the server's memory where it was and gets the 413 sentence; an upload path keeps its
larger limit."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from hermes_site.security import DEFAULT_BODY_LIMIT
from tests.daphne import Daphne, rss_mb, start_daphne

_MB = 1024 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daphne]:
    with start_daphne(tmp_path_factory.mktemp("body-cap")) as s:
        yield s


def stream(server: Daphne, path: str, total: int, *, chunked: bool) -> tuple[int, bytes]:
    """POST `total` bytes to `path` a megabyte at a time (never built in memory); how many bytes
    the server took before it stopped the upload, and its answer."""
    sock = socket.create_connection(("127.0.0.1", server.port), timeout=60)
    length = b"Transfer-Encoding: chunked" if chunked else b"Content-Length: %d" % total
    sock.sendall(
        b"POST "
        + path.encode()
        + b" HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % server.port
        + b"Content-Type: application/octet-stream\r\n"
        + length
        + b"\r\n\r\n"
    )
    piece = b"x" * _MB
    sent = 0
    try:
        while sent < total:
            sock.sendall(b"%x\r\n%s\r\n" % (len(piece), piece) if chunked else piece)
            sent += len(piece)
        if chunked:
            sock.sendall(b"0\r\n\r\n")
    except (BrokenPipeError, ConnectionResetError):
        pass  # the server closed the connection: the answer is already in our buffer
    answer = b""
    try:
        while chunk := sock.recv(65536):
            answer += chunk
    except ConnectionResetError:
        pass
    finally:
        sock.close()
    return sent, answer


@pytest.mark.slow  # against a daphne subprocess
@pytest.mark.parametrize("chunked", [False, True], ids=["content-length", "chunked"])
def test_a_512_mb_body_to_login_is_refused_while_it_arrives(server: Daphne, chunked: bool):
    before = rss_mb(server.process.pid)
    sent, answer = stream(server, "/login", 512 * _MB, chunked=chunked)
    grew = rss_mb(server.process.pid) - before
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 "), answer[:200]
    assert body.decode() == "The request is larger than 6 MB. Nothing was changed."
    assert sent < 512 * _MB  # stopped long before the end
    assert grew < 20, f"the server grew by {grew:.0f} MB"


@pytest.mark.slow
def test_an_upload_path_keeps_its_larger_limit(server: Daphne):
    # 7 MB to the attachment upload passes the cap (and is then refused for lacking a login).
    _, answer = stream(server, "/chat/attach/", DEFAULT_BODY_LIMIT + _MB, chunked=True)
    assert not answer.startswith(b"HTTP/1.1 413"), answer[:200]
    _, answer = stream(server, "/chat/attach/", 11 * _MB, chunked=True)
    assert answer.startswith(b"HTTP/1.1 413") and answer.endswith(
        b"The file is larger than 10 MB. It was not attached."
    )
