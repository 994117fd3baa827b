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


# A row id is a signed 64-bit integer in every database the project runs on: a larger number
# names no upload, and handed to a query it would fail there instead of being refused here.
MAX_ROW_ID = 2**63 - 1


def is_row_id(value: object) -> bool:
    """Whether `value` (from JSON) can be the id of a stored row: a whole number from 1 to MAX_ROW_ID."""
    return isinstance(value, int) and not isinstance(value, bool) and 0 < value <= MAX_ROW_ID


def images_of(frame: dict[str, Any], per_message: int) -> tuple[tuple[int, ...], str | None]:
    """The uploaded image ids a message frame attaches ("images": [id, …]), or why they cannot be."""
    if "attachments" in frame:  # a guess at the field's name: said plainly, not sent without them
        return (), 'Attach uploads with "images": [id, …]; "attachments" is not a field. Nothing was sent.'
    value = frame.get("images", [])
    not_ids = '"images" must be a list of the ids of attached images (whole numbers). Nothing was sent.'
    if not isinstance(value, list):
        return (), not_ids
    # The count first: a list of thousands of ids is refused without looking at each.
    if len(value) > per_message:
        return (), f"A message can carry {per_message} images; this one has {len(value):,}. Nothing was sent."
    if not all(is_row_id(v) for v in value):
        return (), not_ids
    if value and ("edit" in frame or "regenerate" in frame or "continue" in frame):
        return (), "Images can be attached to a new message only, not to an edit. Nothing was sent."
    return tuple(dict.fromkeys(value)), None
