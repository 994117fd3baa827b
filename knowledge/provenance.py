"""Who made a change to knowledge, carried from the caller into the stores' change log."""

from __future__ import annotations

from dataclasses import dataclass

# Who can change knowledge, with the label the pages show; the change log's choices come from here.
ACTOR_LABELS = {
    "agent": "main agent",
    "review": "review",
    "flush": "flush",
    "user": "user",
    "import": "import",
    "external": "external edit",
    "undo": "undo",
}
ACTORS = tuple(ACTOR_LABELS)


@dataclass(frozen=True)
class Provenance:
    actor: str = "user"
    session_id: str | None = None
    review_id: int | None = None
    message_id: int | None = None
    # (quote, stored message id or None) pairs that support the write (knowledge/verification/evidence.py).
    evidence: tuple[tuple[str, int | None], ...] = ()

    def __post_init__(self) -> None:
        if self.actor not in ACTORS:
            raise ValueError(f"unknown actor {self.actor!r}")
