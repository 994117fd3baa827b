"""A page's chat websocket on a real daphne server (tests/daphne.py), opened with the logged-in
client's session cookie and the page's own origin, and the frames it sends."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from websockets.asyncio.client import ClientConnection
from websockets.asyncio.client import connect as ws_connect
from websockets.typing import Origin

from tests.daphne import Daphne, Http


def chat_socket(server: Daphne, client: Http, session_id: str) -> Any:
    """An `async with` context for the chat's socket, as the logged-in page opens it."""
    return ws_connect(
        f"ws://127.0.0.1:{server.port}/ws/chat/{session_id}/",
        origin=Origin(server.origin),
        additional_headers={"Cookie": f"sessionid={client.cookies['sessionid']}"},
        open_timeout=30,
    )


async def frames_until(ws: ClientConnection, kind: str, limit: float = 60) -> list[dict[str, Any]]:
    """Every frame up to and including the first of type `kind`; `limit` seconds for each."""
    frames: list[dict[str, Any]] = []
    while not frames or frames[-1]["type"] != kind:
        frames.append(json.loads(await asyncio.wait_for(ws.recv(), limit)))
    return frames


def say(server: Daphne, client: Http, session_id: str, *texts: str) -> None:
    """The person sends each text on `server`'s chat socket and waits for each answer to finish."""

    async def turns() -> None:
        async with chat_socket(server, client, session_id) as ws:
            for text in texts:
                await ws.send(json.dumps({"type": "message", "text": text}))
                await frames_until(ws, "ready")

    asyncio.run(turns())
