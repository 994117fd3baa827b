"""What one chat's own settings change in its requests to the model.

The person's instructions for a chat go at the end of the system message of each request (the
stored, frozen system prompt is not changed, so compression and the prompt page keep reading it
as built); its temperature goes into the request body. Blank instructions and no temperature
leave the request as the defaults make it (the server's own temperature).
"""

from __future__ import annotations

from typing import Any

HEADING = "## The person's instructions for this chat"


def with_instructions(messages: list[dict[str, Any]], instructions: str) -> list[dict[str, Any]]:
    """An API copy of `messages` whose system message ends with `instructions` (the list itself if blank)."""
    if not instructions.strip() or not messages or messages[0].get("role") != "system":
        return messages
    system = str(messages[0].get("content") or "")
    joined = f"{system}\n\n{HEADING}\n{instructions.strip()}" if system else f"{HEADING}\n{instructions.strip()}"
    return [{**messages[0], "content": joined}, *messages[1:]]
