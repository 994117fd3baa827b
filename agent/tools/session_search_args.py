"""The arguments of `session_search` (agent/tools/session_search.py): Hermes' names and shapes, each
checked. A `limit`, `window` or `sort` the tool cannot read falls back to its default, as Hermes
does, and the result says so (`defaults`); any other value it cannot use is a clear error.

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
    # Values that could not be read and were replaced by their defaults, in the model's words.
    defaults: dict[str, str] = field(default_factory=dict)  # argument -> what was used instead


def _integer(name: str, value: Any) -> int:
    """An integer argument; text of digits is accepted (some models quote numbers)."""
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"`{name}` must be an integer, not {value!r}.")
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"`{name}` must be an integer, not {value!r}.") from None


def _whole(value: Any) -> int | None:
    """A count read as Hermes reads `limit` and `window`: a number (a fraction cut to its whole
    part) or text of digits; None for anything else."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float):
        return int(value) if value == value and abs(value) != float("inf") else None
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def _clamped(name: str, value: Any, default: int, low: int, high: int, defaults: dict[str, str]) -> int:
    """A count clamped to its range, as Hermes clamps `limit` and `window`; one it cannot read
    is its default, as in Hermes, noted in `defaults` so the model knows."""
    number = _whole(value)
    if number is None:
        defaults[name] = f"`{name}` {value!r} is not a whole number: the default {default} was used."
        number = default
    return min(high, max(low, number))


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


def _sort(value: Any, defaults: dict[str, str]) -> str:
    """An order Hermes knows, or relevance (Hermes' default) for anything else, noted in `defaults`."""
    text = value.strip().lower() if isinstance(value, str) else None
    if text == "":
        return "relevance"
    if text not in SORTS:
        defaults["sort"] = f"`sort` {value!r} is not one of {', '.join(SORTS)}: relevance was used."
        return "relevance"
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
    defaults: dict[str, str] = {}
    args = Args(
        shape,
        query=query,
        limit=_clamped("limit", given.get("limit", DEFAULT_LIMIT), DEFAULT_LIMIT, 1, MAX_LIMIT, defaults),
        sort=_sort(given.get("sort", "relevance"), defaults),
        roles=_roles(given.get("role_filter", "")),
        session_id=session_id or None,
        around=around,
        window=_clamped("window", given.get("window", DEFAULT_WINDOW), DEFAULT_WINDOW, 1, MAX_WINDOW, defaults),
    )
    args.unused = sorted(set(given) - _SHAPES[shape])
    # A value of an argument this kind of call does not read is reported unused, not defaulted.
    args.defaults = {name: note for name, note in defaults.items() if name not in args.unused}
    return args
