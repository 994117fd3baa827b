"""The arguments of `session_search` (agent/tools/session_search.py): Hermes' names and shapes, each
checked, so a value the tool cannot use is a clear error in the result, never silently ignored.

The shapes, chosen from the arguments as Hermes chooses them: `query` searches (with `sort`,
`role_filter`, `limit`); `session_id` alone reads a session (its first and last messages);
`around_message_id` (with or without `session_id`) reads the messages around that one; nothing
lists recent sessions. An argument of another shape is reported as not used (`unused`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from knowledge.search import SORTS

DEFAULT_LIMIT = 3
MAX_LIMIT = 10
DEFAULT_WINDOW = 5  # messages either side of `around_message_id`, as in Hermes
MAX_WINDOW = 20
ROLES = ("user", "assistant", "tool", "system")

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {
            "type": "string",
            "description": 'Words to look for; all must appear. "quoted phrase" for words side by side, '
            "A OR B for either, deploy* for words starting so, -word or NOT word to leave messages with "
            "it out. Titles are searched too. Omit to list recent sessions.",
        },
        "limit": {"type": "integer", "minimum": 1, "maximum": MAX_LIMIT, "default": DEFAULT_LIMIT},
        "sort": {
            "type": "string",
            "enum": list(SORTS),
            "default": "relevance",
            "description": "With query: best match first (relevance), or among the best matches the "
            "sessions started most recently (newest: 'where did we leave X') or first (oldest: 'how did X start').",
        },
        "role_filter": {
            "type": "string",
            "description": f"With query: comma-separated roles whose messages to search ({', '.join(ROLES)}), "
            "e.g. 'user,assistant'. Default: all.",
        },
        "session_id": {
            "type": "string",
            "description": "Search within this one session (with query), read it (alone: its first 20 and "
            "last 10 messages), or the session of around_message_id.",
        },
        "around_message_id": {
            "type": "integer",
            "description": "Read the messages around this one (a result's message_id or any id seen): "
            "to read on, pass the last id shown; to read back, the first.",
        },
        "window": {
            "type": "integer",
            "minimum": 1,
            "maximum": MAX_WINDOW,
            "default": DEFAULT_WINDOW,
            "description": "With around_message_id: messages to show on each side of it.",
        },
    },
}
_SHAPES = {  # which arguments each shape reads
    "search": {"query", "limit", "sort", "role_filter", "session_id"},
    "scroll": {"around_message_id", "window", "session_id"},
    "read": {"session_id"},
    "recent": {"limit"},
}


@dataclass
class Args:
    shape: str
    query: str = ""
    limit: int = DEFAULT_LIMIT
    sort: str = "relevance"
    roles: list[str] | None = None
    session_id: str | None = None
    around: int | None = None
    window: int = DEFAULT_WINDOW
    unused: list[str] = field(default_factory=list)  # given, but not read by this shape


def _integer(name: str, value: Any) -> int:
    """An integer argument; text of digits is accepted (some models quote numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"`{name}` must be an integer, not {value!r}.")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"`{name}` must be an integer, not {value!r}.") from None


def _clamped(name: str, value: Any, low: int, high: int) -> int:
    """An integer clamped to its range, as Hermes clamps `limit` and `window`."""
    return min(high, max(low, _integer(name, value)))


def _message_id(value: Any) -> int:
    number = _integer("around_message_id", value)
    if number < 1:
        raise ValueError(f"`around_message_id` must be a message id (a positive integer), not {value!r}.")
    return number


def _text(name: str, value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"`{name}` must be a string, not {value!r}.")
    return value.strip()


def _roles(value: Any) -> list[str] | None:
    names = [r.strip().lower() for r in _text("role_filter", value).split(",") if r.strip()]
    wrong = [r for r in names if r not in ROLES]
    if wrong:
        raise ValueError(
            f"`role_filter` has unknown roles ({', '.join(wrong)}): use a comma-separated list of {', '.join(ROLES)}."
        )
    return names or None


def _sort(value: Any) -> str:
    text = _text("sort", value).lower() or "relevance"
    if text not in SORTS:
        raise ValueError(f"`sort` must be one of {', '.join(SORTS)}, not {value!r}.")
    return text


def parse(raw: dict[str, Any]) -> Args:
    """The call's arguments, checked; ValueError with the message for the model otherwise. A
    null or empty value counts as not given."""
    given = {k: v for k, v in raw.items() if v is not None and v != ""}
    unknown = sorted(set(given) - set(PARAMETERS["properties"]))
    if unknown:
        known = ", ".join(PARAMETERS["properties"])
        raise ValueError(f"session_search has no argument {', '.join(map(repr, unknown))}; it takes {known}.")
    query = _text("query", given["query"]) if "query" in given else ""
    session_id = _text("session_id", given["session_id"]) if "session_id" in given else None
    around = _message_id(given["around_message_id"]) if "around_message_id" in given else None
    shape = "scroll" if around else "search" if query else "read" if session_id else "recent"
    args = Args(
        shape,
        query=query,
        limit=_clamped("limit", given.get("limit", DEFAULT_LIMIT), 1, MAX_LIMIT),
        sort=_sort(given.get("sort", "relevance")),
        roles=_roles(given.get("role_filter", "")),
        session_id=session_id or None,
        around=around,
        window=_clamped("window", given.get("window", DEFAULT_WINDOW), 1, MAX_WINDOW),
    )
    args.unused = sorted(set(given) - _SHAPES[shape])
    return args
