"""Websocket consumers: they only translate (docs/ARCHITECTURE.md, "The path of a turn").

`/ws/chat/<session_id>/` — frames in: {"type": "message", "text"}, {"type": "stop"},
{"type": "join"}, {"type": "ping"}. Frames out, for one turn and in this order: turn_started, delta*,
tool_started/tool_finished*, done | error, saved, then ready (the session accepts the next
message). A bad frame gets {"type": "error", "error": "..."} and the socket stays open.
Frames beyond the per-connection rate limit (agent/chat/ratelimit.py) get an error starting with
"Slow down:" plus "retry_after" (seconds); the refused message is not stored.

A message frame may carry "edit": id (a new version of that question), or, without "text",
"regenerate": id or "continue": id of an answer (agent/chat/versions.py).

Every socket of one session is in the group `chat.<session_id>`: the frames of a turn are
mirrored to the session's other sockets (another tab on the same chat), marked "mirrored", so
every tab shows the conversation live; only the sender gets refusals of its own frames. Sockets
introduce themselves to the group (join/peer/leave), so a turn is mirrored only while another
socket of the session listens — on any server process sharing the channel layer.

A page sends {"type": "join"} whenever its socket opens. While a turn of its session runs (a
reload, a second tab, another device, a reconnect) the socket then gets the turn's frames so far,
the first a turn_started marked "joined", then the rest live, and Stop works from it as from the
tab that sent the message, wherever that tab went (agent/chat/turn_hub.py). When no turn runs,
the answer is {"type": "idle"}: what the page shows is the stored conversation.

A socket showing a turn that runs elsewhere watches that turn's lease (knowledge/history/turns.py):
when its server dies, the socket gets {"type": "error", "error": SERVER_STOPPED} and "ready"
within seconds, so no tab stays busy; the answer streamed so far is stored, marked interrupted.
The session group, joining and the lease watch are `TurnWatch` (agent/chat/turn_watch.py): the
consumer hands it the group's messages and the page's join.
Stop is answered {"type": "stopping", "running": bool}; running false: nothing runs any more.

`/ws/notify/` — every open page: {"type": "review", "line", "href", ...} when a background
review finishes, {"type": "review_started", "session_id"} when one is spawned, {"type": "title",
"session_id", "title"} when the model named a chat after its first answer.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from dataclasses import replace
from typing import Any, ClassVar

from autobahn.exception import Disconnected
from channels.consumer import get_handler_name
from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from agent.chat import live, ratelimit
from agent.chat import service as chat_service
from agent.chat import versions as chat_versions
from agent.chat.attachments import IMAGES_PER_MESSAGE
from agent.chat.frames import Frame, FrameQueue
from agent.chat.socket_access import SESSIONS_GROUP, same_origin
from agent.chat.turn_hub import TurnHub, group_of
from agent.chat.turn_watch import SERVER_STOPPED as SERVER_STOPPED
from agent.chat.turn_watch import WATCH_EVERY, TurnWatch
from agent.chat.validation import images_of, message_error
from foundation import config as hermes_config
from knowledge import attachments
from knowledge.models import ChatSession
from knowledge.versions import VersionError

Claim = threading.Event | None | Exception  # a turn's Stop flag, None (busy), or why the claim failed

UNAUTHORIZED = 4401
FORBIDDEN_ORIGIN = 4403
BAD_SESSION_ID = 4400
# Session ids are 32 hex digits; anything a Channels group name can hold ("chat.<id>": ASCII
# letters, digits, '-', '_', '.', under 100 characters) is let through to the 'no such session'
# handling, anything else is refused here rather than failing inside group_add (an HTTP 500).
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def _refusal(scope: dict[str, Any]) -> int | None:
    """Why a handshake is refused (a close code), or None. Closing before accept = HTTP 403."""
    user = scope.get("user")
    if user is None or not user.is_authenticated:
        return UNAUTHORIZED
    if not same_origin(scope):
        return FORBIDDEN_ORIGIN  # cross-site websocket hijacking, e.g. from another local port
    return None


class _LogoutMixin:
    """Every open socket closes when the dashboard logs out."""

    async def join_sessions(self) -> None:
        await self.channel_layer.group_add(SESSIONS_GROUP, self.channel_name)  # type: ignore[attr-defined]

    async def leave_sessions(self) -> None:
        if getattr(self, "channel_name", None):
            await self.channel_layer.group_discard(SESSIONS_GROUP, self.channel_name)  # type: ignore[attr-defined]

    async def auth_logout(self, event: dict[str, Any]) -> None:
        await self.close(code=UNAUTHORIZED, reason="Logged out: log in again with the printed link.")  # type: ignore[attr-defined]


class ChatConsumer(_LogoutMixin, AsyncJsonWebsocketConsumer):
    # Frame type -> handler method name (a registry, not an if/elif chain).
    HANDLERS: ClassVar[dict[str, str]] = {
        "message": "on_message",
        "stop": "on_stop",
        "join": "on_join",
        "ping": "on_ping",
    }

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels' dispatch without its `aclose_old_connections()` before every handler: that is
        a hop to the one thread all consumers share for sync work, per frame, queueing there when
        dozens of chats send at once. This consumer's handlers reach the database only through
        `database_sync_to_async`, which closes old connections around each call itself.

        Channels offers no public way to skip that hop, so the override stays: with 20 consumers
        handling frames at once, the hop cost hundreds of times the handler's own time per frame."""
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

    async def connect(self) -> None:
        if (code := _refusal(self.scope)) is not None:
            await self.close(code=code)
            return
        self.session_id: str = self.scope["url_route"]["kwargs"]["session_id"]
        if not _SESSION_ID.fullmatch(self.session_id):
            # Accepted first so the refusal can carry a reason the page can show.
            await self.accept()
            shown = self.session_id[:40] + ("…" if len(self.session_id) > 40 else "")
            reason = f"Not a chat session id: {shown!r}. Open the chat from the sessions list."
            await self.send_json({"type": "error", "error": reason})
            await self.close(code=BAD_SESSION_ID, reason=reason)
            self.closed = True
            return
        self.closed = False
        self.hub: TurnHub | None = None  # the turn this socket started, while it runs
        self.limits = ratelimit.ConnectionLimits()
        # This socket's side of the session group: its peers, the turns it joins, their lease.
        self.turns = TurnWatch(
            self.channel_layer, self.session_id, self.channel_name, self.send_frame, every=WATCH_EVERY
        )
        live.capture_loop(asyncio.get_running_loop())
        await self.turns.enter()
        await self.join_sessions()
        await self.accept()
        await self.turns.introduce()

    async def disconnect(self, code: int) -> None:
        # A running turn goes on (its messages are stored); only its frames stop being sent.
        self.closed = True
        turns: TurnWatch | None = getattr(self, "turns", None)  # None: refused before it was made
        if turns is not None:
            turns.end()
        await self.leave_sessions()
        if turns is not None:
            await turns.leave()

    # The session group's messages (agent/chat/turn_watch.py); Channels names the handlers by type.
    async def chat_join(self, event: dict[str, Any]) -> None:
        await self.turns.on_chat_join(event)

    async def chat_peer(self, event: dict[str, Any]) -> None:
        await self.turns.on_chat_peer(event)

    async def chat_leave(self, event: dict[str, Any]) -> None:
        await self.turns.on_chat_leave(event)

    async def chat_mirror(self, event: dict[str, Any]) -> None:
        await self.turns.on_chat_mirror(event)

    async def chat_catchup(self, event: dict[str, Any]) -> None:
        await self.turns.on_chat_catchup(event)

    async def on_join(self, frame: dict[str, Any]) -> None:
        if self.hub is not None and self.hub.running:
            return  # this socket sent the message: it gets every frame already
        await self.turns.join()

    async def _deliver(self, frames: list[Frame]) -> bool:
        """A batch of this socket's own turn; False once the socket is gone."""
        for frame in frames:
            await self.send_frame(frame)
        return not self.closed

    async def send_frame(self, frame: dict[str, Any]) -> None:
        if self.closed:
            return
        try:
            await self.send_json(frame)
        except Disconnected:
            # The page left (a reload) before its disconnect reached this consumer: nothing
            # more is sent here; the turn goes on for the session's other sockets.
            self.closed = True

    async def error(self, message: str, **extra: Any) -> None:
        await self.send_frame({"type": "error", "error": message, **extra})

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None:
            await self.error("Binary frames are not understood; send JSON text.")
            return
        wait, why = self.limits.check_frame()
        if wait:
            await self.error(why, retry_after=wait)
            return
        # Measured before parsing, so a huge frame costs no JSON work (the message limit below
        # gives the precise number once the frame is known to be of a sane size).
        limit = hermes_config.get().agent.max_message_chars
        if len(text_data) > ratelimit.max_frame_chars(limit):
            await self.error(
                f"The frame is {len(text_data):,} characters; messages are limited to {limit:,}. Nothing was sent."
            )
            return
        try:
            frame = json.loads(text_data)
        except ValueError:
            await self.error('That frame is not JSON. Send e.g. {"type": "message", "text": "hello"}.')
            return
        if not isinstance(frame, dict):
            await self.error('A frame must be a JSON object with a "type".')
            return
        name = self.HANDLERS.get(str(frame.get("type")))
        if name is None:
            known = ", ".join(sorted(self.HANDLERS))
            await self.error(f"Unknown frame type {frame.get('type')!r}; expected one of: {known}.")
            return
        await getattr(self, name)(frame)

    async def on_ping(self, frame: dict[str, Any]) -> None:
        await self.send_frame({"type": "pong"})

    async def on_stop(self, frame: dict[str, Any]) -> None:
        running = await database_sync_to_async(chat_service.is_busy)(self.session_id)
        # A turn of this session running in this process stops at once (its hub may not be
        # listening yet when Stop follows the message closely). It may run in another server
        # process, and the socket that started it may be gone: its hub hears the stop wherever
        # it runs (agent/chat/turn_hub.py).
        chat_service.stop_turn(self.session_id)
        await self.channel_layer.group_send(group_of(self.session_id), {"type": "turn.stop"})
        await self.send_frame({"type": "stopping", "running": running})
        self.turns.poke()

    async def on_message(self, frame: dict[str, Any]) -> None:
        try:
            request = chat_versions.request_of(frame)
        except VersionError as exc:
            await self.error(str(exc))
            return
        text = frame.get("text", None if request.needs_text else "")
        if not isinstance(text, str):
            await self.error('A message frame needs "text" (a string).')
            return
        images, problem = images_of(frame, IMAGES_PER_MESSAGE)
        request = replace(request, images=images)
        limit = hermes_config.get().agent.max_message_chars
        if problem is None and request.needs_text:
            problem = message_error(text, limit, len(images))
        if problem is None and images:  # uploads of this chat, not sent yet: nothing stored otherwise
            problem = await database_sync_to_async(attachments.refusal)(list(images), self.session_id)
        if problem is not None:
            await self.error(problem)
            return
        wait, why = self.limits.check_message()
        if wait:
            await self.error(why, retry_after=wait)
            return
        # The session is claimed on the thread that then runs its turn (not on the one thread
        # every consumer's database call shares: when dozens of chats send at once, their claims
        # would queue there one by one before any turn starts). Frames the turn sends before its
        # hub below starts wait in the queue.
        loop = asyncio.get_running_loop()
        claimed: asyncio.Future[Claim] = loop.create_future()
        queue = FrameQueue(loop)

        def heard(outcome: Claim) -> None:  # on the turn's thread
            loop.call_soon_threadsafe(_settle, claimed, outcome)

        chat_service.start_turn(self.session_id, text, queue.put, heard, request)
        outcome = await claimed
        if outcome is None or isinstance(outcome, Exception):
            queue.discard()
            if isinstance(outcome, ChatSession.DoesNotExist):
                await self.error("This chat no longer exists (it was deleted).", retry=False)
                return
            if outcome is not None:
                raise outcome
            await self.error(chat_service.BUSY_MESSAGE)
            return
        interrupt = outcome
        self.turns.end()  # the session was free: any turn watched here is over
        self.hub = TurnHub(
            self.channel_layer,
            self.session_id,
            deliver=self._deliver,
            has_peers=self.turns.has_peers,
            origin=self.channel_name,
            stop=interrupt.set,
        )
        await self.hub.start(queue)


def _settle(future: asyncio.Future[Claim], outcome: Claim) -> None:
    if not future.done():  # (done: the socket closed meanwhile and its handler was cancelled)
        future.set_result(outcome)


class NotifyConsumer(_LogoutMixin, AsyncJsonWebsocketConsumer):
    async def connect(self) -> None:
        if (code := _refusal(self.scope)) is not None:
            await self.close(code=code)
            return
        live.capture_loop(asyncio.get_running_loop())
        await self.channel_layer.group_add(live.GROUP, self.channel_name)
        await self.join_sessions()
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.channel_layer is not None and getattr(self, "channel_name", None):
            await self.channel_layer.group_discard(live.GROUP, self.channel_name)
            await self.leave_sessions()

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        # Pages only ever send pings here; anything else is ignored rather than closing the socket.
        try:
            frame = json.loads(text_data or "")
        except ValueError:
            return
        if isinstance(frame, dict) and frame.get("type") == "ping":
            await self.send_json({"type": "pong"})

    async def to_page(self, event: dict[str, Any]) -> None:
        """A live notice goes to the page as it was sent: its channel-layer type is the frame's type."""
        await self.send_json(event)

    # The handlers of agent/chat/live.py's names (Channels finds a handler by the message type).
    review = review_started = title = to_page
