"""Planning a search on SQLite: which FTS5 index a query goes to, and the SQL pieces for its
terms and filters (run by knowledge/search/sqlite.py).

Queries with Chinese, Japanese, Korean, Thai… characters go to the trigram index (substring
matching, 3+ characters through MATCH, shorter terms by a scan of the small trigram table);
everything else to the word index, ranked by bm25. An `A OR B` whose alternatives need different
indexes (`deploy OR 部署`), or words with a Chinese… exclusion (`deploy -部署`), is a union of
what each alternative finds alone from its own index, newest first, as on PostgreSQL.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowledge.search.filters import Filters, filter_sql
from knowledge.search.sanitize import (
    Term,
    excluded,
    found,
    has_exclusions,
    match_expression,
    quote_term,
    segmented,
    substring,
)
from knowledge.search.schema import FTS, MESSAGES, SESSIONS, TRIGRAM
from knowledge.search.snippets import ELLIPSIS, query_stems

FTS_TABLE = FTS
TRIGRAM_TABLE = TRIGRAM
SNIPPET_TOKENS = 16
# A word of the message (its text, tool name or tool calls) starts with a prefix term (GLOB
# pattern `*[^a-z0-9]start*`): the exact check behind FTS5's stemmed prefix query.
PREFIX_CHECK = "lower(' ' || m.content || ' ' || m.tool_name || ' ' || coalesce(m.tool_calls, '')) GLOB %s"
_TRIGRAM_MIN = 3  # the trigram tokenizer cannot match anything shorter


@dataclass
class Plan:
    """The FROM/WHERE/ORDER of one query, for whichever index fits its terms."""

    table: str
    index_where: list[str]  # conditions on the FTS table alone
    index_params: list[Any]
    filter_where: list[str]  # conditions on the message / session
    filter_params: list[Any]
    needs_session: bool  # a filter reads the sessions table
    snippet: str | None  # SQL for the snippet, or None to build it in Python
    needles: list[str]
    match: str | None
    # Word index: snippets are cut in Python from the page's content (knowledge/search/snippets.py),
    # with snippet() only as the fallback for hits in tool names or arguments.
    stems: frozenset[str] = frozenset()
    excludes: bool = False  # an alternative leaves words out: no common word's top list applies

    @property
    def ranked(self) -> bool:
        return self.match is not None

    @property
    def key(self) -> str:
        """The message id of a row of `index_from`."""
        return "m.id" if self.table == MESSAGES else f"{self.table}.rowid"

    @property
    def index_from(self) -> str:
        """The table `index_where` reads alone."""
        return f"{MESSAGES} m" if self.table == MESSAGES else self.table

    @property
    def order_sql(self) -> str:
        """Best first. `rank` (bm25) is consumed by FTS5 itself, so rows stream in rank order
        and a LIMIT stops the join, the filters and snippet() after the page."""
        return f"{self.table}.rank" if self.ranked else f"{self.key} DESC"

    @property
    def from_sql(self) -> str:
        sql = f"{MESSAGES} m" if self.table == MESSAGES else f"{self.table} JOIN {MESSAGES} m ON m.id = {self.key}"
        return sql + (f" JOIN {SESSIONS} s ON s.id = m.session_id" if self.needs_session else "")

    @property
    def where_sql(self) -> str:
        return " AND ".join(self.index_where + self.filter_where)

    @property
    def params(self) -> list[Any]:
        return self.index_params + self.filter_params


def _snippet_sql(table: str) -> str:
    return f"snippet({table}, -1, char(2), char(3), '{ELLIPSIS}', {SNIPPET_TOKENS})"


def _short_condition(term: str) -> tuple[str, list[Any]]:
    cond = (
        f"(instr(lower({TRIGRAM_TABLE}.content), lower(%s)) > 0"
        f" OR instr(lower(coalesce({TRIGRAM_TABLE}.tool_args, '')), lower(%s)) > 0)"
    )
    return cond, [term, term]


def _term_condition(term: Term) -> tuple[str, list[Any]]:
    """A term of a substring alternative as a condition on the trigram row (NOT for an exclusion)."""
    cond, params = _short_condition(term.text)
    return (f"NOT coalesce({cond}, 0)" if term.exclude else cond), params  # a NULL text holds nothing


def _any_of_scanned(groups: list[list[Term]]) -> tuple[str, list[Any]]:
    """Alternatives with a term too short for a trigram: every term by a scan of the trigram table."""
    ors: list[str] = []
    params: list[Any] = []
    for group in groups:
        conds = [_term_condition(t) for t in group]
        ors.append("(" + " AND ".join(c for c, _ in conds) + ")")
        params += [p for _, ps in conds for p in ps]
    return "(" + " OR ".join(ors) + ")", params


def _substring_ids(term: Term) -> tuple[str, list[Any]]:
    """SELECT of the ids of the messages holding `term` as a substring (the trigram index)."""
    if len(term.text) >= _TRIGRAM_MIN:
        return f"SELECT rowid AS id FROM {TRIGRAM_TABLE} WHERE {TRIGRAM_TABLE} MATCH %s", [quote_term(term.text)]
    cond, params = _short_condition(term.text)
    return f"SELECT rowid AS id FROM {TRIGRAM_TABLE} WHERE {cond}", params


def _group_ids(group: list[Term]) -> tuple[str, list[Any]]:
    """A compound SELECT of the ids one alternative finds: what its terms find (INTERSECT), less
    what its exclusions find (EXCEPT) — read left to right, as SQLite does. Words go to the word
    index, Chinese… terms and every term of a substring alternative to the trigram index."""
    parts: list[tuple[str, str, list[Any]]] = []  # (operator, select, params)
    if not substring(group):
        words = [t for t in group if not t.unsegmented]
        select = f"SELECT rowid AS id FROM {FTS_TABLE} WHERE {FTS_TABLE} MATCH %s"
        parts.append(("", select, [match_expression([words])]))
        group = [t for t in group if t.unsegmented]  # Chinese… exclusions, left for the trigram index
    for term in group:
        sql, params = _substring_ids(term)
        parts.append(("EXCEPT" if term.exclude else "INTERSECT" if parts else "", sql, params))
    return " ".join(f"{op} {sql}".strip() for op, sql, _ in parts), [p for _, _, ps in parts for p in ps]


def _either_plan(groups: list[list[Term]], where: list[str], params: list[Any], filters: Filters) -> Plan:
    """Alternatives that need different indexes (`deploy OR 部署`, or `deploy -部署`): each finds
    what it would find alone, newest first, from the messages table."""
    selects = [_group_ids(g) for g in groups]
    union = " UNION ".join(f"SELECT id FROM ({sql})" for sql, _ in selects)
    words = [t.text for g in groups for t in found(g) if not t.unsegmented and not t.prefix]
    return Plan(
        MESSAGES, [f"m.id IN ({union})"], [p for _, ps in selects for p in ps], where, params,
        filters.needs_session, None, [t.text for g in groups for t in found(g)], None, query_stems(words),
        excludes=has_exclusions(groups),
    )  # fmt: skip


def _word_plan(groups: list[list[Term]], where: list[str], params: list[Any], filters: Filters) -> Plan:
    words = match_expression(groups)
    if len(groups) == 1:  # with OR, a prefix's check would bind the other alternatives too
        for start in filter(None, (t.prefix_filter for t in found(groups[0]))):
            where.append(PREFIX_CHECK)
            params.append(f"*[^a-z0-9]{start}*")
    terms = [t for g in groups for t in found(g)]
    return Plan(
        FTS_TABLE, [f"{FTS_TABLE} MATCH %s"], [words], where, params, filters.needs_session,
        _snippet_sql(FTS_TABLE), [], words, query_stems(t.text for t in terms if not t.prefix),
        excludes=has_exclusions(groups),
    )  # fmt: skip


def plan_query(terms: list[Term], filters: Filters, groups: list[list[Term]] | None = None) -> Plan:
    """`terms`: the terms to find; `groups`: the query's alternatives (with their exclusions),
    or None for `terms` as one alternative."""
    where, params = filter_sql(filters)
    groups = groups or [terms]
    if all(segmented(g) for g in groups):
        return _word_plan(groups, where, params, filters)
    if not all(substring(g) for g in groups):
        return _either_plan(groups, where, params, filters)
    excludes = has_exclusions(groups)
    if len(groups) > 1:
        if all(len(t.text) >= _TRIGRAM_MIN for g in groups for t in g):
            either = match_expression(groups)
            return Plan(
                TRIGRAM_TABLE, [f"{TRIGRAM_TABLE} MATCH %s"], [either], where, params, filters.needs_session,
                _snippet_sql(TRIGRAM_TABLE), [], either, excludes=excludes,
            )  # fmt: skip
        cond, cond_params = _any_of_scanned(groups)
        needles = [t.text for g in groups for t in found(g)]
        return Plan(
            TRIGRAM_TABLE, [cond], cond_params, where, params, filters.needs_session, None, needles, None,
            excludes=excludes,
        )  # fmt: skip
    # Trigram index: terms of 3+ characters through MATCH (substring), shorter ones by a
    # scan of the trigram table, which holds only the messages with non-ASCII text; exclusions
    # are checked on the rows the terms found.
    wanted = found(groups[0])
    long_terms = [t.text for t in wanted if len(t.text) >= _TRIGRAM_MIN]
    short_terms = [t.text for t in wanted if len(t.text) < _TRIGRAM_MIN]
    pre: list[str] = []
    pre_params: list[Any] = []
    match = " ".join(quote_term(t) for t in long_terms) if long_terms else None
    if match:
        pre.append(f"{TRIGRAM_TABLE} MATCH %s")
        pre_params.append(match)
    for term in [t for t in wanted if len(t.text) < _TRIGRAM_MIN] + excluded(groups[0]):
        cond, cond_params = _term_condition(term)
        pre.append(cond)
        pre_params.extend(cond_params)
    return Plan(
        TRIGRAM_TABLE, pre, pre_params, where, params, filters.needs_session,
        _snippet_sql(TRIGRAM_TABLE) if match else None,
        short_terms if match else [t.text for t in wanted], match, excludes=excludes,
    )  # fmt: skip
