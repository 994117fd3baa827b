"""What a person's message must be before a turn starts, checked the same way for the browser
(agent/chat/consumers.py, before the turn is claimed) and the terminal (agent/chat/runner.py,
which both drive): not empty, not over `agent.max_message_chars`. A refused message is not stored."""

from __future__ import annotations

from typing import Any


def message_error(text: str, limit: int, images: int = 0) -> str | None:
    """Why `text` cannot be sent, in the person's words, or None when it can. A message of
    `images` attached images alone (no text) may be sent."""
    if not text.strip() and not images:
        return "The message is empty. Nothing was sent."
    if len(text) > limit:
        return f"The message is {len(text):,} characters; the limit is {limit:,}. Nothing was sent."
    return None


def images_of(frame: dict[str, Any], per_message: int) -> tuple[tuple[int, ...], str | None]:
    """The uploaded image ids a message frame attaches ("images": [id, …]), or why they cannot be."""
    value = frame.get("images", [])
    if not isinstance(value, list) or not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value):
        return (), '"images" must be a list of attached image ids (numbers).'
    if len(value) > per_message:
        return (), f"A message can carry {per_message} images; this one has {len(value)}. Nothing was sent."
    if value and ("edit" in frame or "regenerate" in frame or "continue" in frame):
        return (), "Images can be attached to a new message only, not to an edit. Nothing was sent."
    return tuple(dict.fromkeys(value)), None
