"""The learning loop's notification hook: who hears that a review finished.

Listeners are plain callables (the terminal chat prints, the browser consumer schedules a
toast on its event loop). They are called from the review thread; a listener that fails is
logged and never affects the review or the other listeners.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ReviewNotice:
    session_id: str
    review_id: int
    prompt_kind: str
    summary: str  # "User profile updated · Skill 'x' created", or "" when nothing changed
    status: str  # "done" | "failed"
    error: str = ""
    changes: list[dict[str, str]] = field(default_factory=list)
    waiting: int = 0  # writes the review left for the person to approve (held, or unsupported)

    @property
    def line(self) -> str:
        held = f"{self.waiting} waiting for approval" if self.waiting else ""
        parts = [part for part in (self.summary, held) if part]
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
