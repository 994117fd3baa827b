"""Words and meaning together: how hits by meaning (knowledge/search/meaning.py) join the hits
by words of a search (docs/BEHAVIOUR.md, Sessions and search).

A query of plain words is ranked by reciprocal rank fusion: each message scores 1 / (K + rank)
in each list it is in (its rank by words, its rank by meaning), and the sums decide; so a
message both lists find comes first, and one only the meaning finds can still lead when the
words found nothing like it. A query with syntax — A OR B, a "quoted phrase", a prefix*, a
-word left out — or in Chinese, Japanese… means exactly what it says: its hits by words keep
their order and come first, hits by meaning only follow them, and a message holding a word left
out is never found by meaning either.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import connection

from knowledge.models import Message
from knowledge.search import meaning
from knowledge.search.backends import backend
from knowledge.search.filters import Filters
from knowledge.search.results import COUNT_CAP, MessageHit, SearchPage, first_per_session, to_datetime
from knowledge.search.sanitize import Term, excluded, found

RRF_K = 60  # the usual constant: rank 1 scores 1/61, rank 10 1/70; one list alone never dominates
WINDOW = 40  # hits of each list fused (two pages); deeper hits by words follow in their order
MEANING_HITS = 40  # hits by meaning at most, for one search


@dataclass(frozen=True)
class Meaning:
    """What meaning adds to one search: the messages nearest to the query, nearest first."""

    near: list[meaning.Near]
    plain: bool  # the query is plain words: fuse; else hits by words first, then these

    @property
    def ids(self) -> list[int]:
        return [n.message_id for n in self.near]


def plain(groups: list[list[Term]]) -> bool:
    """Plain words: one alternative, no phrase, prefix, exclusion or unsegmented script."""
    return len(groups) == 1 and not any(t.phrase or t.prefix or t.exclude or t.unsegmented for t in groups[0])


def meaning_text(groups: list[list[Term]]) -> str:
    """What is embedded for a query: the words to find, without operators or exclusions."""
    words: list[str] = []
    for group in groups:
        words += [t.text for t in found(group) if t.text not in words]
    return " ".join(words)


def leave_out_sql(groups: list[list[Term]]) -> list[tuple[str, list[Any]]]:
    """SQL selecting the messages holding a word left out (`-word`, NOT word), by the same index
    the words are searched with: a message left out by words is never found by meaning."""
    out = []
    for term in {t for g in groups for t in excluded(g)}:
        wanted = Term(term.text, phrase=term.phrase, prefix=term.prefix)
        out.append(backend().matching_ids_sql([wanted], [[wanted]]))
    return out


def find(groups: list[list[Term]], filters: Filters, limit: int = MEANING_HITS) -> Meaning | None:
    """The hits by meaning of a search, or None when search is by words only (no embedding model,
    a server without embeddings, or one that failed just now)."""
    text = meaning_text(groups)
    vector = meaning.query_vector(text) if text else None
    if vector is None:
        return None
    space, q = vector
    near = meaning.nearest(space, q, filters, limit, leave_out_sql=leave_out_sql(groups))
    return Meaning(near, plain(groups))


def fuse(by_words: list[int], by_meaning: list[int], *, plain_words: bool) -> list[int]:
    """One ranked list of message ids from the two lists, each best first (see the module's doc).
    `by_words` may be only the first WINDOW (or more) hits by words."""
    if not plain_words:
        words = set(by_words)
        return by_words + [i for i in by_meaning if i not in words]
    scores: dict[int, float] = {}
    for ranked in (by_words[:WINDOW], by_meaning[:WINDOW]):
        for rank, mid in enumerate(ranked, start=1):
            scores[mid] = scores.get(mid, 0.0) + 1.0 / (RRF_K + rank)
    # Ties (one hit by words, one by meaning, same rank) go to the words, then to the newer message.
    word_rank = {mid: r for r, mid in enumerate(by_words)}
    fused = sorted(scores, key=lambda mid: (-scores[mid], word_rank.get(mid, len(by_words)), -mid))
    seen = set(fused)
    return fused + [mid for mid in by_words[WINDOW:] if mid not in seen]


def _also_by_words(ids: list[int], terms: list[Term], groups: list[list[Term]]) -> set[int]:
    """Which of these messages the words find too (by the same index, whatever their rank)."""
    if not ids:
        return set()
    sql, params = backend().matching_ids_sql(terms, groups, among=ids)
    with connection.cursor() as cur:
        cur.execute(sql, params)
        return {int(mid) for (mid,) in cur.fetchall()}


SNIPPET_CHARS = 200


def opening(text: str) -> str:
    """The snippet of a hit by meaning: its text's start, on one line (no word to highlight)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[:SNIPPET_CHARS].rsplit(" ", 1)[0] + " …"


def _meaning_hits(ids: list[int]) -> dict[int, MessageHit]:
    rows = (
        Message.objects.filter(id__in=ids)
        .select_related("session")
        .only("id", "session_id", "role", "created_at", "content", "session__title", "session__name", "session__source")
    )
    return {
        m.id: MessageHit(
            message_id=m.id,
            session_id=m.session_id,
            session_title=m.session.display_title,
            source=m.session.source,
            role=m.role,
            created_at=to_datetime(m.created_at),
            snippet=opening(m.content),
            by_meaning=True,
        )
        for m in rows
    }


def search_page(
    query: str, terms: list[Term], groups: list[list[Term]], filters: Filters, limit: int, offset: int
) -> SearchPage:
    """One page of hits by words and meaning (the backend's page alone when search is by words only)."""
    near = find(groups, filters)
    if near is None:
        return backend().search_messages(query, terms, filters, limit, offset, groups)
    both = _also_by_words(near.ids, terms, groups)
    only_meaning = [i for i in near.ids if i not in both]
    if near.plain:
        words = backend().search_messages(query, terms, filters, max(offset + limit, WINDOW), 0, groups)
        order = fuse([h.message_id for h in words.results], near.ids, plain_words=True)[offset : offset + limit]
    else:  # hits by words first, in their order; then the hits by meaning alone
        words = backend().search_messages(query, terms, filters, limit, offset, groups)
        start = max(0, offset - words.total) if not words.total_capped else len(only_meaning)
        room = limit - len(words.results)
        order = [h.message_id for h in words.results] + only_meaning[start : start + max(0, room)]
    hits = {h.message_id: h for h in words.results}
    hits.update(_meaning_hits([i for i in order if i not in hits]))
    total = words.total + len(only_meaning)
    page = SearchPage(
        query=query,
        results=[hits[i] for i in order if i in hits],
        total=min(total, COUNT_CAP),
        total_capped=words.total_capped or total > COUNT_CAP,
    )
    page.meaning = True
    return page


def best_per_session(
    terms: list[Term], groups: list[list[Term]], filters: Filters, limit: int
) -> tuple[list[tuple[str, int]], dict[int, str], set[str]]:
    """The backend's best sessions with those found by meaning joined in (see fuse): (session,
    best message) pairs, the messages' snippets, and the sessions found by meaning alone."""
    best, snippets = backend().best_per_session(terms, filters, limit, groups)
    near = find(groups, filters)
    if near is None or not near.near:
        return best, snippets, set()
    by_meaning = first_per_session(((n.message_id, n.session_id) for n in near.near), limit)
    word_sessions = {sid for sid, _ in best}
    message_of = dict(best)
    for sid, mid in by_meaning:
        message_of.setdefault(sid, mid)
    # Sessions fused as messages are: each session stands for its best message in each list.
    session_of = {mid: sid for sid, mid in [*best, *by_meaning]}
    order = fuse(
        [message_of[sid] for sid, _ in best],
        [message_of[sid] for sid, _ in by_meaning],
        plain_words=near.plain,
    )
    fused = [(session_of.get(mid) or "", mid) for mid in order][:limit]
    fused = [(sid, message_of[sid]) for sid, _ in fused if sid]
    only_meaning = {sid for sid, _ in fused if sid not in word_sessions}
    openings = _meaning_hits([mid for sid, mid in fused if sid in only_meaning])
    snippets.update({mid: hit.snippet for mid, hit in openings.items()})
    return fused, snippets, only_meaning
