"""Full-text search on PostgreSQL: the same results as the FTS5 backend (knowledge/search/sqlite.py),
from the index described in knowledge/search/schema.py.

Words go through `phraseto_tsquery` on the `hermes` text search configuration (English stems,
no stop words, accents folded), one per literal term from the same sanitiser (knowledge/search/sanitize.py),
ANDed (an exclusion joined by `&& !!`), so nothing a person types is tsquery syntax. They are
matched and ranked in the narrow `knowledge_message_search` table (id, session, role, time,
tsvector), aliased `m` so the shared filters apply to it as to a message; only the page's rows
are then read from `knowledge_message`.
Hits are ranked by `ts_rank`, best first (cheaper than the cover-density `ts_rank_cd`, which
ranked the same in the tests). A one-word query with more hits than the count cap is ranked
through the word's top list (knowledge/search/top.py), which also proves its count past the cap
without reading a heap page per hit. Queries with Chinese,
Japanese, Korean… characters are substring matches on `search_text`, served by a pg_trgm GIN
index, newest first, as the FTS5 trigram path. Snippets are cut in Python from the
page's content (knowledge/search/snippets.py), with `ts_headline` as the fallback for hits in tool
names or arguments.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.db import connection

from knowledge.search import results as search_results
from knowledge.search import schema
from knowledge.search import top as search_top
from knowledge.search import top_postgres as search_top_pg
from knowledge.search.filters import Filters, filter_sql
from knowledge.search.results import MessageHit, RebuildCounts, SearchPage, first_per_session
from knowledge.search.sanitize import Term, excluded, found, has_exclusions, segmented, substring
from knowledge.search.snippets import (
    ELLIPSIS,
    HIGHLIGHT_END,
    HIGHLIGHT_START,
    query_stems,
    stem_snippet,
    substring_snippet,
)
from knowledge.search.top_postgres import CONFIG, TSQUERY, rank

_HEADLINE = (
    f"StartSel={HIGHLIGHT_START}, StopSel={HIGHLIGHT_END}, MaxWords=16, MinWords=6, FragmentDelimiter={ELLIPSIS}"
)


@dataclass
class PgPlan:
    table: str  # aliased `m`: the word index's table, or the messages for substring matches
    where: str
    params: list[Any]
    rank: str | None  # SQL of the rank (needs `tsq`), or None for newest first
    tsquery: str | None
    tsquery_params: list[Any]
    needs_session: bool
    needles: list[str]
    stems: frozenset[str]
    excludes: bool = False  # an alternative leaves words out: no common word's top list applies

    @property
    def from_sql(self) -> str:
        # The query first: joins after the message table bind to it.
        tsq = f"(SELECT {self.tsquery} AS q) tsq, " if self.tsquery else ""
        join = " JOIN knowledge_chatsession s ON s.id = m.session_id" if self.needs_session else ""
        return f"{tsq}{self.table} m{join}"

    @property
    def all_params(self) -> list[Any]:
        return self.tsquery_params + self.params

    @property
    def order(self) -> str:
        return f"{self.rank} DESC, m.id DESC" if self.rank else "m.id DESC"

    @property
    def ranked(self) -> str:
        """The rank as a column (a constant for newest-first matches; ties go to the newest)."""
        return f"{self.rank} AS r" if self.rank else "0 AS r"


def _like(term: str) -> str:
    escaped = term.lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


# A word of the message (its text, tool calls or tool name) starts with a prefix term: the exact
# check behind the stemmed prefix tsquery (as on SQLite: knowledge/search/plan.py).
PREFIX_CHECK = (
    "EXISTS (SELECT 1 FROM knowledge_message x WHERE x.id = m.id"
    " AND (x.search_text || ' ' || lower(x.tool_name) || ' ' || lower(coalesce(x.tool_calls::text, ''))) ~ %s)"
)
# A prefix term as tsquery text: its words quoted (letters and digits only, so nothing typed is
# syntax), the last one a prefix, and — as on SQLite — also one letter shorter.
PREFIX_TSQUERY = f"to_tsquery('{CONFIG}', %s)"
_WORDS = re.compile(r"[^\W_]+")


def _term_tsquery(term: Term) -> str:
    return PREFIX_TSQUERY if term.prefix else TSQUERY


def _group_tsquery(group: list[Term]) -> str:
    """An alternative's tsquery: its terms ANDed, less (`&& !!`) each of its exclusions."""
    wanted = " && ".join(_term_tsquery(t) for t in found(group))
    unwanted = [_term_tsquery(t) for t in excluded(group)]
    return f"({wanted}) && !!({' || '.join(unwanted)})" if unwanted else wanted


def _tsquery(groups: list[list[Term]]) -> str:
    ands = [_group_tsquery(g) for g in groups]
    return ands[0] if len(ands) == 1 else " || ".join(f"({a})" for a in ands)


def _tsquery_text(term: Term) -> str:
    """The parameter of a term's tsquery: its text, or for a prefix the to_tsquery text."""
    if not term.prefix:
        return term.text
    words = _WORDS.findall(term.text) or ["_"]
    head = "".join(f"'{w}' <-> " for w in words[:-1])
    last = words[-1]
    alternatives = [f"{head}'{last}':*"] + (
        [f"{head}'{last[:-1]}':*"] if len(term.text) >= 4 and term.text.isalnum() else []
    )
    return " | ".join(f"({a})" for a in alternatives)


_LIKE = "m.search_text LIKE %s"
_NOT_LIKE = "m.search_text NOT LIKE %s"


def _substring_sql(group: list[Term]) -> str:
    """An alternative as substring matches on `search_text` (every term found, no exclusion)."""
    return "(" + " AND ".join(_NOT_LIKE if t.exclude else _LIKE for t in group) + ")"


def _group_condition(group: list[Term]) -> tuple[str, list[Any]]:
    """One alternative as a condition on a message, from the index it needs alone: words from the
    word index (Chinese… exclusions as substrings), a substring alternative from `search_text`."""
    if substring(group):
        return _substring_sql(group), [_like(t.text) for t in group]
    words = [t for t in group if not t.unsegmented]
    rest = [t for t in group if t.unsegmented]
    sql = f"m.id IN (SELECT w.id FROM knowledge_message_search w WHERE w.search_vector @@ ({_tsquery([words])}))"
    params: list[Any] = [_tsquery_text(t) for t in words]
    return "(" + " AND ".join([sql] + [_NOT_LIKE] * len(rest)) + ")", params + [_like(t.text) for t in rest]


def _either_plan(groups: list[list[Term]], where: list[str], params: list[Any], filters: Filters) -> PgPlan:
    """Alternatives that need different indexes (`deploy OR 部署`, `deploy -部署`): each finds what
    it would find alone, newest first, as on SQLite (knowledge/search/plan.py)."""
    conds = [_group_condition(g) for g in groups]
    either = "(" + " OR ".join(c for c, _ in conds) + ")"
    wanted = [t for g in groups for t in found(g)]
    return PgPlan(
        "knowledge_message", " AND ".join([either, *where]), [p for _, ps in conds for p in ps] + params, None, None,
        [], filters.needs_session, [t.text for t in wanted],
        query_stems(t.text for t in wanted if not t.unsegmented and not t.prefix), has_exclusions(groups),
    )  # fmt: skip


def plan(terms: list[Term], filters: Filters, groups: list[list[Term]] | None = None) -> PgPlan:
    """`terms`: the terms to find; `groups`: the query's alternatives (with their exclusions),
    or None for `terms` as one alternative."""
    where, params = filter_sql(filters)
    needs_session = filters.needs_session
    groups = groups or [terms]
    excludes = has_exclusions(groups)
    ordered = [t for g in groups for t in g]  # the parameters, in the order of the SQL
    if all(substring(g) for g in groups):
        subs = ["(" + " OR ".join(_substring_sql(g) for g in groups) + ")"]
        return PgPlan(
            "knowledge_message", " AND ".join(subs + where), [_like(t.text) for t in ordered] + params, None, None, [],
            needs_session, [t.text for t in terms], frozenset(), excludes,
        )  # fmt: skip
    if not all(segmented(g) for g in groups):
        return _either_plan(groups, where, params, filters)
    if len(groups) == 1:  # with OR, a prefix's check would bind the other alternatives too
        for start in filter(None, (t.prefix_filter for t in terms)):
            where.append(PREFIX_CHECK)
            params.append("(^|[^a-z0-9])" + re.sub(r"([^a-z0-9])", r"\\\1", start))
    return PgPlan(
        "knowledge_message_search", " AND ".join(["m.search_vector @@ tsq.q", *where]), params,
        rank("m.search_vector", "tsq.q"), _tsquery(groups), [_tsquery_text(t) for t in ordered], needs_session, [],
        query_stems(t.text for t in terms if not t.prefix), excludes,
    )  # fmt: skip


def _headlines(cur: Any, p: PgPlan, ids: list[int]) -> dict[int, str]:
    if not ids or p.tsquery is None:
        return {}
    cur.execute(
        f"SELECT m.id, ts_headline('{CONFIG}', coalesce(m.content, '') || ' ' || coalesce(m.search_text, ''),"
        " tsq.q, %s)"
        f" FROM knowledge_message m, (SELECT {p.tsquery} AS q) tsq WHERE m.id = ANY(%s)",
        [_HEADLINE, *p.tsquery_params, ids],  # in the order of the %s in the SQL
    )
    return {mid: text for mid, text in cur.fetchall() if HIGHLIGHT_START in (text or "")}


def snippets_for(cur: Any, p: PgPlan, contents: dict[int, str]) -> dict[int, str]:
    """Snippets of these messages (id -> content): Python-cut words, ts_headline, or substrings."""
    found = {mid: cut for mid, text in contents.items() if p.stems and (cut := stem_snippet(text, p.stems))}
    found.update(_headlines(cur, p, [mid for mid in contents if mid not in found]))
    for mid, text in contents.items():
        found.setdefault(mid, substring_snippet(text, p.needles))
    return found


def _count(cur: Any, p: PgPlan) -> int:
    cur.execute(
        f"SELECT count(*) FROM (SELECT 1 FROM {p.from_sql} WHERE {p.where} LIMIT %s) hits",
        [*p.all_params, search_results.COUNT_CAP + 1],
    )
    return int(cur.fetchone()[0])


def _one_word(p: PgPlan, terms: list[Term]) -> bool:
    """A query a top list can rank (knowledge/search/top.py): one ranked word or phrase."""
    return p.rank is not None and len(terms) == 1 and not terms[0].prefix and not p.excludes


def _word_count(cur: Any, terms: list[Term]) -> int:
    """The capped count of a one-word query's hits without filters: past the cap when the word's
    top list proves it, as counting would — counting reads a heap page per hit."""
    if search_top_pg.hits_at_least(cur, terms[0].text) > search_results.COUNT_CAP:
        return search_results.COUNT_CAP + 1
    return _count(cur, plan(terms, Filters()))


def _list_ids(cur: Any, terms: list[Term], need: int | None, total: int) -> list[int] | None:
    """A common word's best hits (`total`: its capped count) from its top list, or None."""
    if total <= search_results.COUNT_CAP:
        return None
    return search_top.ranked(cur, search_top_pg, terms[0].text, terms[0].text, need) or None


def _listed(cur: Any, p: PgPlan, terms: list[Term], filters: Filters) -> list[tuple[int, str]] | None:
    """(message id, session id) of a common word's best hits that pass the filters, best first,
    as many as its top list can tell: every other hit ranks below all of them. None when no
    list applies."""
    ids = _list_ids(cur, terms, None, _word_count(cur, terms)) if _one_word(p, terms) else None
    if ids is None:
        return None
    where, params = filter_sql(filters)
    join = " JOIN knowledge_chatsession s ON s.id = m.session_id" if p.needs_session else ""
    cur.execute(
        f"SELECT m.id, m.session_id FROM knowledge_message_search m{join} WHERE m.id = ANY(%s)"
        + "".join(f" AND {cond}" for cond in where),
        [ids, *params],
    )
    session_of = dict(cur.fetchall())
    return [(mid, session_of[mid]) for mid in ids if mid in session_of]


def _page(
    cur: Any, p: PgPlan, terms: list[Term], filters: Filters | None, total: int, limit: int, offset: int
) -> list[int]:
    """The ids of one page of hits, best first: from the word's list when it can fill the page
    (`filters`: None when there are none; then `total` is the word's own capped count)."""
    need = offset + limit
    if filters is not None:
        listed = _listed(cur, p, terms, filters)
        ids = [mid for mid, _ in listed] if listed else None
    else:
        ids = _list_ids(cur, terms, need, total) if _one_word(p, terms) else None
    if ids is not None and len(ids) >= need:
        return ids[offset:need]
    cur.execute(
        f"SELECT m.id FROM {p.from_sql} WHERE {p.where} ORDER BY {p.order} LIMIT %s OFFSET %s",
        [*p.all_params, limit, offset],
    )
    return [mid for (mid,) in cur.fetchall()]


def search_messages(
    query: str, terms: list[Term], filters: Filters, limit: int, offset: int, groups: list[list[Term]] | None = None
) -> SearchPage:
    p = plan(terms, filters, groups)
    with connection.cursor() as cur:
        filtered = bool(filter_sql(filters)[0])
        total = _word_count(cur, terms) if _one_word(p, terms) and not filtered else _count(cur, p)
        rows: list[tuple[Any, ...]] = []
        if total > min(offset, search_results.COUNT_CAP):
            # The page is chosen in the index's table; only its rows are read in full.
            ids = _page(cur, p, terms, filters if filtered else None, total, limit, offset)
            cur.execute(
                "SELECT m.id, m.session_id, s.title, s.name, s.source, m.role, m.created_at, m.content"
                " FROM knowledge_message m JOIN knowledge_chatsession s ON s.id = m.session_id WHERE m.id = ANY(%s)",
                [ids],
            )
            found = {row[0]: row for row in cur.fetchall()}
            rows = [found[mid] for mid in ids if mid in found]
        snippets = snippets_for(cur, p, {row[0]: row[7] for row in rows})
    results = [
        MessageHit(mid, sid, title or name or "New chat", source, role, created, snippets.get(mid, ""))
        for mid, sid, title, name, source, role, created, _content in rows
    ]
    return SearchPage.capped(query, results, total)


def best_per_session(
    terms: list[Term], filters: Filters, limit: int, groups: list[list[Term]] | None = None
) -> tuple[list[tuple[str, int]], dict[int, str]]:
    """(session id, best message id) for the `limit` best sessions, and those messages' snippets."""
    p = plan(terms, filters, groups)
    with connection.cursor() as cur:
        listed = _listed(cur, p, terms, filters)
        best = first_per_session(listed or [], limit)
        if len(best) < limit:
            cur.execute(
                f"SELECT session_id, id FROM (SELECT DISTINCT ON (m.session_id) m.session_id, m.id, {p.ranked}"
                f" FROM {p.from_sql} WHERE {p.where} ORDER BY m.session_id, {p.order}) best"
                " ORDER BY r DESC, id DESC LIMIT %s",
                [*p.all_params, limit],
            )
            best = [(sid, mid) for sid, mid in cur.fetchall()]
        cur.execute("SELECT id, content FROM knowledge_message WHERE id = ANY(%s)", [[mid for _, mid in best]])
        snippets = snippets_for(cur, p, dict(cur.fetchall()))
    return best, snippets


def matching_ids_sql(
    terms: list[Term], groups: list[list[Term]] | None = None, among: list[int] | None = None
) -> tuple[str, list[Any]]:
    p = plan(terms, Filters(), groups)
    if among is None:
        return f"SELECT m.id FROM {p.from_sql} WHERE {p.where}", p.all_params
    return f"SELECT m.id FROM {p.from_sql} WHERE {p.where} AND m.id = ANY(%s)", [*p.all_params, list(among)]


def rebuild(cur: Any, *, optimize: bool = False) -> RebuildCounts:
    """`optimize` is FTS5's segment merge: PostgreSQL's indexes are built whole here anyway."""
    count = schema.rebuild_postgres(cur)
    return RebuildCounts(count, search_top.rebuild_lists(cur, search_top_pg))


class PostgresSearch:
    """The PostgreSQL backend (knowledge/search/backends.py)."""

    top: search_top.TopLists = search_top_pg

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
        return best_per_session(terms, filters, limit, groups)

    def matching_ids_sql(
        self, terms: list[Term], groups: list[list[Term]] | None = None, among: list[int] | None = None
    ) -> tuple[str, list[Any]]:
        return matching_ids_sql(terms, groups, among)

    def rebuild(self, cur: Any, *, optimize: bool = False) -> RebuildCounts:
        return rebuild(cur, optimize=optimize)
