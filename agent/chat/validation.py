"""What a person's message must be before a turn starts, checked the same way for the browser
(agent/chat/consumers.py, before the turn is claimed) and the terminal (agent/chat/runner.py,
which both drive): not empty, not over `agent.max_message_chars`. A refused message is not stored."""

from __future__ import annotations


def message_error(text: str, limit: int) -> str | None:
    """Why `text` cannot be sent, in the person's words, or None when it can."""
    if not text.strip():
        return "The message is empty. Nothing was sent."
    if len(text) > limit:
        return f"The message is {len(text):,} characters; the limit is {limit:,}. Nothing was sent."
    return None
