"""Opening the chat websocket in-process with Channels' communicator, as a logged-in page would."""

from __future__ import annotations

from typing import Any

from channels.routing import URLRouter
from channels.testing import WebsocketCommunicator

from agent.routing import websocket_urlpatterns

APP = URLRouter(websocket_urlpatterns)


async def open_socket(path: str, user: Any) -> WebsocketCommunicator:
    # The page's own origin: the consumers refuse handshakes whose Origin is not the Host.
    comm = WebsocketCommunicator(APP, path, headers=[(b"origin", b"http://testserver"), (b"host", b"testserver")])
    comm.scope["user"] = user
    connected, code = await comm.connect()
    assert connected, code
    return comm


async def frames_until(comm: WebsocketCommunicator, last: str, timeout: float = 15) -> list[dict[str, Any]]:
    """Every frame the socket sends up to and including the first of type `last`."""
    frames: list[dict[str, Any]] = []
    while not frames or frames[-1]["type"] != last:
        frames.append(await comm.receive_json_from(timeout=timeout))
    return frames
