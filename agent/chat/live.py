"""Live notices from background jobs to every open page, after the answer: learning toasts
(a review finished) and a chat's new title (the model named it).

agent.learning.notify calls its listeners from the review thread. `async_to_sync(group_send)` from a plain
thread arrives late or never with the in-memory channel layer (docs/DECISIONS.md, record 11), so the
one process-wide listener schedules the send on the server's event loop, captured when a
consumer connects.

Ordering: the runner spawns the review before the chat consumer has sent the turn's last frames,
and a fast review can finish first. A toast for a session therefore waits until that session's
in-flight turn has been fully delivered (`TurnGate`), so the 💾 line (or the new title) never arrives
before the answer it followed.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer, get_channel_layer
from django.urls import reverse

from agent.learning import notify

log = logging.getLogger(__name__)

GROUP = "hermes.notify"
# One name per event, from where it happens to the page: the channel-layer message type, the
# NotifyConsumer handler, the frame's "type" and the page's DOM event ("hermes:" + the name).
REVIEW = "review"  # a background review finished: its 💾 toast
REVIEW_STARTED = "review_started"  # a review was spawned after a turn
TITLE = "title"  # the model named a chat
# A turn that never reports delivery (a crashed consumer) must not hold a toast back for long.
GATE_TIMEOUT = 30.0


class TurnGate:
    """Per session: is a turn's output still being sent? Used only on the event loop."""

    def __init__(self) -> None:
        self._delivered: dict[str, asyncio.Event] = {}

    def begin(self, session_id: str) -> None:
        self._delivered[session_id] = asyncio.Event()

    def delivered(self, session_id: str) -> None:
        event = self._delivered.pop(session_id, None)
        if event is not None:
            event.set()

    async def wait(self, session_id: str, timeout: float = GATE_TIMEOUT) -> None:
        event = self._delivered.get(session_id)
        if event is None:
            return
        try:
            await asyncio.wait_for(event.wait(), timeout)
        except TimeoutError:
            log.warning("turn of session %s not delivered after %.0fs; sending its toast anyway", session_id, timeout)


gate = TurnGate()
# Only needed with the in-memory channel layer, which lives on this process's event loop.
_loop: asyncio.AbstractEventLoop | None = None


def capture_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Remember the server's loop (the latest one: tests run one loop per test)."""
    global _loop
    _loop = loop


def listen() -> None:
    """Forward every review notice of this process to the pages (called once, at start-up)."""
    notify.subscribe(on_notice)


def saved_href(notice: notify.ReviewNotice) -> str:
    """Where the saved part links: the memory page, the one skill it wrote, or the review's changes."""
    saved = notice.saved
    if saved and all(s["kind"] == "memory" for s in saved):
        return reverse("memory")
    skills = {s["target"] for s in saved}
    only_skills = all(s["kind"] == "skill" for s in saved)
    if saved and only_skills and len(skills) == 1 and not any(s["action"] == "delete" for s in saved):
        return reverse("skill_detail", args=[next(iter(skills))])
    return f"{reverse('changes')}?review={notice.review_id}"


def held_href(notice: notify.ReviewNotice) -> str:
    """The inbox showing only this review's waiting writes."""
    return f"{reverse('pending')}?review={notice.review_id}"


def notice_parts(notice: notify.ReviewNotice) -> list[dict[str, str]]:
    """The toast's line in its parts, each a link: what was saved, and what waits for the person."""
    parts = []
    if notice.saved:
        parts.append({"text": notice.saved_text, "href": saved_href(notice), "title": notice.summary})
    if notice.held:
        parts.append({"text": notice.held_text, "href": held_href(notice), "title": "Approve or reject in the inbox"})
    return parts


def notice_href(notice: notify.ReviewNotice) -> str:
    """The toast's one link where a page shows it whole: what was saved, else the inbox, else the review."""
    if notice.saved:
        return saved_href(notice)
    if notice.held:
        return held_href(notice)
    if notice.status == "failed":
        return reverse("reviews")
    return f"{reverse('changes')}?review={notice.review_id}"


def notice_payload(notice: notify.ReviewNotice) -> dict[str, Any]:
    return {
        "session_id": notice.session_id,
        "review_id": notice.review_id,
        "kind": notice.prompt_kind,
        "line": notice.line,
        "parts": notice_parts(notice),
        "summary": notice.summary,
        "status": notice.status,
        "error": notice.error,
        "href": notice_href(notice),
        "saved": len(notice.saved),
        "held": len(notice.held),
        "requested": notice.requested,
    }


def on_notice(notice: notify.ReviewNotice) -> None:
    """Called on the review's thread."""
    send_after_turn(notice.session_id, REVIEW, notice_payload(notice), f"review {notice.review_id}")


def title_changed(session_id: str, title: str) -> None:
    """The model named a chat (agent/chat/titles.py): every open page updates its chat list and, on
    that chat, its header. Called from the title job's thread or a queue worker."""
    send_after_turn(session_id, TITLE, {"session_id": session_id, "title": title}, f"title of {session_id}")


def send_after_turn(session_id: str, event_type: str, payload: dict[str, Any], what: str) -> None:
    """Send to every open page from any thread, after the session's in-flight turn was delivered.

    With the in-memory layer the send must run on the server's loop (docs/DECISIONS.md, record 11); a
    shared layer (Redis) is reached from any thread or process, e.g. a queue worker, and delivers
    to the pages of every server process."""
    loop = _loop
    if loop is not None and not loop.is_closed():
        asyncio.run_coroutine_threadsafe(_forward(session_id, event_type, payload), loop)
    elif not isinstance(get_channel_layer(), InMemoryChannelLayer):
        async_to_sync(broadcast)(event_type, payload)
    else:
        log.info("%s: no page connected to this process; nothing to send", what)


async def _forward(session_id: str, event_type: str, payload: dict[str, Any]) -> None:
    await gate.wait(session_id)
    await broadcast(event_type, payload)


async def broadcast(event_type: str, payload: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:
        log.warning("no channel layer configured; live notifications are off")
        return
    await layer.group_send(GROUP, {"type": event_type, **payload})
