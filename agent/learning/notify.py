"""The learning loop's notification hook: who hears that a review finished.

Listeners are plain callables (the terminal chat prints, the browser consumer schedules a
toast on its event loop). They are called from the review thread; a listener that fails is
logged and never affects the review or the other listeners.

A notice carries what the review did as data — the writes it saved and the writes it left
waiting for the person — so every listener words and links it from the same records, never by
reading the summary sentence back.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypedDict

log = logging.getLogger(__name__)


class SavedWrite(TypedDict):
    """A write the review saved (one successful memory or skill_manage call that changed a file)."""

    kind: str  # "memory" | "skill"
    target: str  # memory: "memory" | "user"; skill: the skill's name
    action: str  # the tool's action: add, replace, create, patch, delete …
    message: str  # the tool's own words: "User profile updated", "Skill 'x' created"


class HeldWrite(TypedDict):
    """A write the review left in the inbox (held by the write policy, or staged for approval)."""

    kind: str
    target: str
    action: str
    pending_id: int  # the PendingWrite waiting for the person
    hold: str  # its PendingWrite.hold_kind ("" when it only waits because approval is on)


@dataclass(frozen=True)
class ReviewNotice:
    session_id: str
    review_id: int
    prompt_kind: str
    summary: str  # "User profile updated · Skill 'x' created", or "" when nothing changed
    status: str  # "done" | "failed"
    error: str = ""
    saved: list[SavedWrite] = field(default_factory=list)
    held: list[HeldWrite] = field(default_factory=list)
    requested: bool = False  # the person asked for this review (review on demand), so "nothing" is news too

    @property
    def saved_text(self) -> str:
        return f"{len(self.saved)} saved" if self.saved else ""

    @property
    def held_text(self) -> str:
        count = len(self.held)
        if not count:
            return ""
        return "1 waits for you" if count == 1 else f"{count} wait for you"

    @property
    def line(self) -> str:
        """The toast's line, "💾 1 saved · 1 waits for you" or "💾 2 wait for you"; empty when the
        review neither saved nor held anything."""
        parts = [part for part in (self.saved_text, self.held_text) if part]
        return f"💾 {' · '.join(parts)}" if parts else ""


Listener = Callable[[ReviewNotice], None]
_listeners: list[Listener] = []
_lock = threading.Lock()


def subscribe(fn: Listener) -> Callable[[], None]:
    with _lock:
        _listeners.append(fn)

    def unsubscribe() -> None:
        with _lock:
            if fn in _listeners:
                _listeners.remove(fn)

    return unsubscribe


def publish(notice: ReviewNotice) -> None:
    with _lock:
        listeners = list(_listeners)
    for fn in listeners:
        try:
            fn(notice)
        except Exception:  # one broken tab or terminal must not stop the others hearing it
            log.exception("review notification listener failed")
