"""Evidence for learned knowledge (docs/DECISIONS.md, record 5): verbatim quotes checked against the conversation.

A review or flush write must quote the conversation it learned from. A quote is supported when,
after folding whitespace, case and quote marks, it occurs inside one of the messages the writer
actually saw (for memory: what the user said; for skills: the user's words or tool output). A
supported quote is then mapped back to the stored Message it came from, so the change log can
link the entry to the exact message.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from knowledge import versions
from knowledge.models import Message
from knowledge.verification.documents import Located, statement_text

# Quote marks of the languages people write in: straight, curly, guillemets, CJK corner brackets.
_QUOTES = re.compile(
    "[\"'`\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u00ab\u00bb\u2039\u203a\u300c-\u300f\uff02\uff07]"
)
_SPACE = re.compile(r"\s+")
# Shorter than this (after folding) a "quote" proves nothing: "yes" occurs in every chat.
MIN_QUOTE_CHARS = 6
MAX_QUOTES = 5
# How far back a quote is looked for among the session's stored messages.
SEARCH_WINDOW = 2000

ROLES_BY_KIND = {"memory": ("user",), "skill": ("user", "tool")}


@dataclass(frozen=True)
class Quote:
    quote: str
    message_id: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"quote": self.quote, "message_id": self.message_id}


@dataclass(frozen=True)
class Verdict:
    """The outcome of checking a write's evidence: the supported quotes, or why it is not supported."""

    quotes: tuple[Quote, ...] = ()
    reason: str = ""
    # Each quote with the text of the message it was found in, for the support check.
    located: tuple[Located, ...] = ()

    @property
    def supported(self) -> bool:
        return bool(self.quotes) and not self.reason


def fold(text: str) -> str:
    """Text with width, case, quote marks and runs of whitespace folded away."""
    text = unicodedata.normalize("NFKC", text)
    return _SPACE.sub(" ", _QUOTES.sub("", text)).strip().casefold()


def parse_quotes(raw: Any) -> list[str] | str:
    """The `evidence` argument as a list of quotes, or an error message."""
    if raw is None or raw == "" or raw == []:
        return []
    items = [raw] if isinstance(raw, str) else raw
    if not isinstance(items, list) or not all(isinstance(q, str) for q in items):
        return "'evidence' must be a string or a list of strings (verbatim quotes from the conversation)."
    quotes = [q.strip() for q in items if q.strip()]
    return quotes[:MAX_QUOTES]


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def check(
    raw: Any, seen: Sequence[dict[str, Any]], kind: str, session_id: str | None, *, since_id: int | None = None
) -> Verdict:
    """Check the quotes of `raw` against what was said. With a session, the stored messages are the
    record (what the person typed, not the model's copy with a /skill expanded or a summary in it),
    from `since_id` on when given; without one, the messages the writer saw (`seen`)."""
    quotes = parse_quotes(raw)
    if isinstance(quotes, str):
        return Verdict(reason=quotes)
    if not quotes:
        return Verdict(reason="No evidence was given: quote the conversation's exact words in 'evidence'.")
    roles = ROLES_BY_KIND.get(kind, ("user",))
    pool = _stored(session_id, roles, since_id) if session_id else _unstored(seen, roles)
    found: list[Quote] = []
    located: list[Located] = []
    for quote in quotes:
        folded = fold(quote)
        if len(folded) < MIN_QUOTE_CHARS:
            return Verdict(reason=f"The quote {quote!r} is too short to show anything.")
        hit = _find(pool, folded, documents_count=kind != "memory")
        if isinstance(hit, str):
            return Verdict(reason=_missing(quote, hit, seen, roles))
        message_id, role, text = hit
        found.append(Quote(quote, message_id))
        located.append(Located(quote, text, role))
    return Verdict(quotes=tuple(found), located=tuple(located))


# (message id, role, the text as stored, the text with its pasted documents blanked)
_Row = tuple[int | None, str, str, str]


def _stored(session_id: str, roles: Iterable[str], since_id: int | None) -> list[_Row]:
    rows = Message.objects.filter(session_id=session_id, role__in=list(roles))
    rows = rows.exclude(id__in=versions.off_path_of(session_id))  # what the review saw: the chosen version
    if since_id is not None:
        rows = rows.filter(id__gte=since_id)
    latest = rows.order_by("-id").values_list("id", "role", "content")[:SEARCH_WINDOW]
    return [(int(i), role, c, statement_text(c) if role == "user" else c) for i, role, c in latest]


def _unstored(seen: Sequence[dict[str, Any]], roles: Iterable[str]) -> list[_Row]:
    rows = [(str(m.get("role")), _text(m)) for m in reversed(seen) if m.get("role") in roles]
    return [(None, role, t, statement_text(t) if role == "user" else t) for role, t in rows]


def _find(pool: list[_Row], folded: str, *, documents_count: bool) -> tuple[int | None, str, str] | str:
    """(message id, role, text) of the latest message saying the quote, or why none does
    ("document": only inside something pasted; "absent")."""
    in_document = None
    for message_id, role, content, said in pool:
        if folded in fold(said):
            return message_id, role, said
        if folded in fold(content):
            # Found only in what the person pasted: it may show what the skill is about, never
            # that it ran ("That worked" in a pasted page is the page's, not the person's).
            in_document = in_document or (message_id, "document" if role == "user" else role, content)
    if in_document is not None and documents_count:
        return in_document
    return "document" if in_document else "absent"


def _missing(quote: str, why: str, seen: Sequence[dict[str, Any]], roles: Sequence[str]) -> str:
    q = repr(quote[:120])
    if why == "document":
        return (
            f"The quote {q} is inside something the person pasted (code, a quoted text, a document), "
            "not their own words about themselves."
        )
    if any(fold(quote) in fold(_text(m)) for m in seen if m.get("role") in roles):
        return (
            f"The quote {q} is in the model's copy of the conversation (an expanded /skill, a summary of "
            "earlier messages) but not in anything the person typed."
        )
    who = "the user's messages" if tuple(roles) == ("user",) else "the user's messages or tool output"
    return f"The quote {q} does not appear in {who}."


def locate(session_id: str | None, roles: Iterable[str], folded_quote: str) -> int | None:
    """The id of the latest stored message of this session (with one of `roles`) holding the quote."""
    if not session_id:
        return None
    for message_id, _role, _content, said in _stored(session_id, roles, None):
        if folded_quote in fold(said):
            return message_id
    return None


def of_message(message_id: int | None, text: str) -> Verdict:
    """Evidence for a main-agent write: the user message of the current turn."""
    snippet = " ".join(text.split())[:300]
    if not snippet:
        return Verdict(reason="The turn has no user message.")
    return Verdict(quotes=(Quote(snippet, message_id),))
