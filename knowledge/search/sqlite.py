"""Full-text search on SQLite: two FTS5 indexes (knowledge/search/schema.py), a word index
(porter + unicode61) ranked by bm25 and a trigram index over the messages holding non-ASCII
text. A query that contains Chinese, Japanese, Korean, Thai… characters goes to the trigram index
(substring matching); everything else to the word index. knowledge/search/plan.py chooses the
index and writes the SQL pieces; this module runs them.

Snippets of the word index are cut in Python from the page's content (knowledge/search/snippets.py),
with FTS5's snippet() as the fallback for hits in tool names or arguments.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from django.db import connection

from knowledge.models import Message
from knowledge.search import results as search_results
from knowledge.search import schema, top_sqlite
from knowledge.search import top as search_top
from knowledge.search.filters import Filters
from knowledge.search.plan import FTS_TABLE, MESSAGES, SESSIONS, Plan, plan_query
from knowledge.search.results import (
    SESSION_BATCH,
    MessageHit,
    RebuildCounts,
    SearchPage,
    first_per_session,
    to_datetime,
)
from knowledge.search.sanitize import Term
from knowledge.search.snippets import stem_snippet, substring_snippet

# -- query execution ----------------------------------------------------------------------------------
#
# Ranking is exact bm25: every hit is scored, as FTS5 must — except for a one-word query with
# more than COUNT_CAP hits, which is ranked through the word's top list (knowledge/search/top.py):
# its best hits by bm25 plus the newer ones; a page or a set of sessions it cannot fill from them
# is ranked over every hit as below. The count stops at COUNT_CAP + 1 rows. Without filters,
# neither the count nor the ranking touches the messages table; the message rows and snippets
# are read for the final page only. For a query with many hits, the page is chosen by SQLite's
# top-N sorter over bm25() (it keeps only offset + limit rows) — cheaper than ORDER BY rank, for
# which FTS5 fully sorts every hit before the first row comes out; snippets then come from one
# lookup of those rowids. With few hits, or with filters (which must see rows in rank order
# until the page is full), one streaming query over ORDER BY rank does it all and computes
# snippet() for the page rows only.


def _count(cur: Any, plan: Plan, *, filtered: bool = True) -> int:
    filtered = filtered and bool(plan.filter_where)
    frm = plan.from_sql if filtered else plan.index_from
    where = plan.where_sql if filtered else " AND ".join(plan.index_where)
    params = plan.params if filtered else plan.index_params
    cur.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {frm} WHERE {where} LIMIT %s)", [*params, search_results.COUNT_CAP + 1]
    )
    return int(cur.fetchone()[0])


def _listed(
    cur: Any, plan: Plan, terms: list[Term], need: int | None, word_hits: int | None = None
) -> list[tuple[int, str]] | None:
    """(message id, session id) of a common word's best hits that pass the filters, best first,
    from its top list: every other hit ranks below all of them. `need`: the page's hits, or None
    for as many as the list can tell. `word_hits`: the unfiltered capped count, when the caller
    has it. None when no list applies."""
    if plan.table != FTS_TABLE or len(terms) != 1 or terms[0].prefix or plan.match is None or plan.excludes:
        return None
    if word_hits is None:
        word_hits = _count(cur, plan, filtered=False)
    if word_hits <= search_results.COUNT_CAP:
        return None
    text = terms[0].text
    # Filters may drop any of the list's hits: then all of them are read, not just the page's.
    ids = search_top.ranked(cur, top_sqlite, text, plan.match, need)
    if not ids:
        return None
    join = f" JOIN {SESSIONS} s ON s.id = m.session_id" if plan.needs_session else ""
    cur.execute(
        f"SELECT m.id, m.session_id FROM {MESSAGES} m{join} WHERE m.id IN (SELECT value FROM json_each(%s))"
        + "".join(f" AND {cond}" for cond in plan.filter_where),
        [json.dumps(ids), *plan.filter_params],
    )
    session_of = dict(cur.fetchall())
    return [(mid, session_of[mid]) for mid in ids if mid in session_of]


def _page(
    cur: Any, plan: Plan, terms: list[Term], total: int, limit: int, offset: int
) -> tuple[list[int], dict[int, str]]:
    """The ids of one page of hits, best first, and the snippets already computed for them."""
    t = plan.table
    if plan.ranked and (plan.filter_where or total > search_results.COUNT_CAP):
        if plan.filter_where:
            listed = _listed(cur, plan, terms, None)
        else:  # `total` is then the word's own capped count: not counted again
            listed = _listed(cur, plan, terms, offset + limit, word_hits=total)
        if listed is not None and len(listed) >= offset + limit:
            return [mid for mid, _ in listed[offset : offset + limit]], {}
    if plan.ranked and not plan.filter_where and total > search_results.COUNT_CAP:
        cur.execute(
            f"SELECT rowid FROM {t} WHERE {' AND '.join(plan.index_where)} ORDER BY bm25({t}) LIMIT %s OFFSET %s",
            [*plan.index_params, limit, offset],
        )
        return [rowid for (rowid,) in cur.fetchall()], {}
    snippet = "NULL" if plan.stems or not plan.snippet else plan.snippet
    cur.execute(
        f"SELECT {plan.key}, {snippet} FROM {plan.from_sql} WHERE {plan.where_sql} "
        f"ORDER BY {plan.order_sql} LIMIT %s OFFSET %s",
        [*plan.params, limit, offset],
    )
    rows = cur.fetchall()
    return [rowid for rowid, _ in rows], {rowid: snip for rowid, snip in rows if snip}


def _message_rows(cur: Any, ids: list[int]) -> dict[int, tuple[Any, ...]]:
    if not ids:
        return {}
    cur.execute(
        "SELECT m.id, m.session_id, s.title, s.name, s.source, m.role, m.created_at, m.content "
        f"FROM {MESSAGES} m JOIN {SESSIONS} s ON s.id = m.session_id "
        f"WHERE m.id IN ({', '.join(['%s'] * len(ids))})",
        ids,
    )
    return {row[0]: row for row in cur.fetchall()}


def _fts_snippets(cur: Any, plan: Plan, ids: list[int]) -> dict[int, str]:
    """snippet() for these rowids (each must exist: external content is read for it)."""
    if not ids or plan.snippet is None or plan.match is None:
        return {}
    cur.execute(
        f"SELECT rowid, {plan.snippet} FROM {plan.table} WHERE {plan.table} MATCH %s "
        f"AND rowid IN ({', '.join(['%s'] * len(ids))})",
        [plan.match, *ids],
    )
    return {rowid: snip for rowid, snip in cur.fetchall() if snip}


def search_messages(
    query: str, terms: list[Term], filters: Filters, limit: int, offset: int, groups: list[list[Term]] | None = None
) -> SearchPage:
    """One page of matching messages, best first (exact bm25), with a capped total count."""
    plan = plan_query(terms, filters, groups)
    rows: dict[int, tuple[Any, ...]] = {}
    ids: list[int] = []
    snippets: dict[int, str] = {}
    with connection.cursor() as cur:
        total = _count(cur, plan)
        if total > min(offset, search_results.COUNT_CAP):  # a capped count says nothing about deep pages
            ids, snippets = _page(cur, plan, terms, total, limit, offset)
            rows = _message_rows(cur, ids)
            ids = [i for i in ids if i in rows]  # an index entry without its message: skip it
            for i in ids:
                if i not in snippets and (cut := stem_snippet(rows[i][7], plan.stems)):
                    snippets[i] = cut
            snippets.update(_fts_snippets(cur, plan, [i for i in ids if i not in snippets]))
    results = []
    for mid in ids:
        _, sid, title, name, source, role, created, content = rows[mid]
        results.append(
            MessageHit(
                message_id=mid,
                session_id=sid,
                session_title=title or name or "New chat",
                source=source,
                role=role,
                created_at=to_datetime(created),
                snippet=snippets.get(mid) or substring_snippet(content, plan.needles),
            )
        )
    return SearchPage.capped(query, results, total)


def _streamed(cur: Any) -> Iterator[tuple[int, str]]:
    while batch := cur.fetchmany(SESSION_BATCH):
        yield from ((mid, sid) for sid, mid in batch)


def _best_per_session(plan: Plan, terms: list[Term], limit: int) -> tuple[list[tuple[str, int]], dict[int, str]]:
    with connection.cursor() as cur:
        listed = _listed(cur, plan, terms, None)
        best = first_per_session(listed or [], limit)
        if len(best) < limit:
            # Hits stream in rank order (all of them scored, as FTS5 does for ORDER BY rank); the
            # first hit of a session is its best one, so reading stops once `limit` sessions are
            # found — no GROUP BY over every hit's message row.
            cur.execute(
                f"SELECT m.session_id, m.id FROM {plan.from_sql} WHERE {plan.where_sql} ORDER BY {plan.order_sql}",
                plan.params,
            )
            best = first_per_session(_streamed(cur), limit)
        snippets = _snippets_for(cur, plan, [mid for _, mid in best])
    return best, snippets


def _snippets_for(cur: Any, plan: Plan, message_ids: list[int]) -> dict[int, str]:
    found: dict[int, str] = {}
    if plan.stems:
        for m in Message.objects.filter(id__in=message_ids).only("id", "content"):
            if cut := stem_snippet(m.content, plan.stems):
                found[m.id] = cut
    found.update(_fts_snippets(cur, plan, [mid for mid in message_ids if mid not in found]))
    missing = [mid for mid in message_ids if mid not in found]
    for m in Message.objects.filter(id__in=missing).only("id", "content"):
        found[m.id] = substring_snippet(m.content, plan.needles or [])
    return found


def matching_ids_sql(
    terms: list[Term], groups: list[list[Term]] | None = None, among: list[int] | None = None
) -> tuple[str, list[Any]]:
    plan = plan_query(terms, Filters(), groups)
    where, params = list(plan.index_where), list(plan.index_params)
    if among is not None:  # FTS5 seeks each rowid in the match's doclists: a common word costs no more
        where.append(f"{plan.key} IN ({', '.join(['%s'] * len(among))})")
        params.extend(among)
    return f"SELECT {plan.key} FROM {plan.index_from} WHERE {' AND '.join(where)}", params


def rebuild(cur: Any, *, optimize: bool = False) -> RebuildCounts:
    counts = schema.rebuild_sqlite(cur, optimize=optimize)
    lists = search_top.rebuild_lists(cur, top_sqlite)
    return RebuildCounts(counts[schema.MESSAGES], lists, trigram=counts[schema.TRIGRAM])


class SqliteSearch:
    """The SQLite backend (knowledge/search/backends.py)."""

    top: search_top.TopLists = top_sqlite

    def search_messages(
        self,
        query: str,
        terms: list[Term],
        filters: Filters,
        limit: int,
        offset: int,
        groups: list[list[Term]] | None = None,
    ) -> SearchPage:
        return search_messages(query, terms, filters, limit, offset, groups)

    def best_per_session(
        self, terms: list[Term], filters: Filters, limit: int, groups: list[list[Term]] | None = None
    ) -> tuple[list[tuple[str, int]], dict[int, str]]:
        return _best_per_session(plan_query(terms, filters, groups), terms, limit)

    def matching_ids_sql(
        self, terms: list[Term], groups: list[list[Term]] | None = None, among: list[int] | None = None
    ) -> tuple[str, list[Any]]:
        return matching_ids_sql(terms, groups, among)

    def rebuild(self, cur: Any, *, optimize: bool = False) -> RebuildCounts:
        return rebuild(cur, optimize=optimize)
