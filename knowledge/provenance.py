"""Who made a change to knowledge, carried from the caller into the stores' change log."""

from __future__ import annotations

from dataclasses import dataclass

ACTORS = ("agent", "review", "flush", "user", "import", "external", "undo")


@dataclass(frozen=True)
class Provenance:
    actor: str = "user"
    session_id: str | None = None
    review_id: int | None = None
    message_id: int | None = None

    def __post_init__(self) -> None:
        if self.actor not in ACTORS:
            raise ValueError(f"unknown actor {self.actor!r}")
