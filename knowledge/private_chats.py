"""Private chats (docs/BEHAVIOUR.md, Private chats): a chat kept out of learning and recall.

The flag is stored on the session row (`ChatSession.private`) and read fresh wherever it decides
something, so a chat switched on one page or server process is private everywhere at once. What
reads it: the runner with the rest of the row at each turn (no counters, no skill outcomes), the
review (never started), the memory flush, the memory providers (neither asked nor told), the
memory and skill_manage tools (REFUSAL), and search (private chats' messages and titles are never
found).
"""

from __future__ import annotations

from knowledge.models import ChatSession

# What a learning write from a private chat answers: the tools' error, for the model.
REFUSAL = "This chat is private: nothing from it is saved."


def is_private(session_id: str | None) -> bool:
    """Whether the chat with this id is private now (False for no chat, or one deleted)."""
    if not session_id:
        return False
    return ChatSession.objects.filter(pk=session_id, private=True).exists()


def set_private(session_id: str, private: bool) -> bool:
    """Store the flag; False when there is no such chat."""
    return ChatSession.set_private(session_id, private)
