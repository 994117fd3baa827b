"""Planning a search on SQLite: which FTS5 index a query goes to, and the SQL pieces for its
terms and filters (run by knowledge/search/sqlite.py).

Queries with Chinese, Japanese, Korean, Thai… characters go to the trigram index (substring
matching, 3+ characters through MATCH, shorter terms by a scan of the small trigram table);
everything else to the word index, ranked by bm25.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from knowledge.search.filters import Filters, filter_sql
from knowledge.search.sanitize import Term, match_expression, quote_term
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

    @property
    def ranked(self) -> bool:
        return self.match is not None

    @property
    def order_sql(self) -> str:
        """Best first. `rank` (bm25) is consumed by FTS5 itself, so rows stream in rank order
        and a LIMIT stops the join, the filters and snippet() after the page."""
        return f"{self.table}.rank" if self.ranked else f"{self.table}.rowid DESC"

    @property
    def from_sql(self) -> str:
        sql = f"{self.table} JOIN {MESSAGES} m ON m.id = {self.table}.rowid"
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


def _any_of_scanned(groups: list[list[Term]]) -> tuple[str, list[Any]]:
    """Alternatives with a term too short for a trigram: every term by a scan of the trigram table."""
    ors: list[str] = []
    params: list[Any] = []
    for group in groups:
        conds = [_short_condition(t.text) for t in group]
        ors.append("(" + " AND ".join(c for c, _ in conds) + ")")
        params += [p for _, ps in conds for p in ps]
    return "(" + " OR ".join(ors) + ")", params


def plan_query(terms: list[Term], filters: Filters, groups: list[list[Term]] | None = None) -> Plan:
    """`groups`: the alternatives of an OR query (terms is then all of their terms)."""
    where, params = filter_sql(filters)
    needs_session = filters.needs_session
    alternatives = groups if groups and len(groups) > 1 else None
    if not any(t.unsegmented for t in terms):
        words = match_expression(alternatives or [terms])
        if not alternatives:  # with OR, a prefix's check would bind the other alternatives too
            for start in filter(None, (t.prefix_filter for t in terms)):
                where.append(PREFIX_CHECK)
                params.append(f"*[^a-z0-9]{start}*")
        return Plan(
            FTS_TABLE, [f"{FTS_TABLE} MATCH %s"], [words], where, params, needs_session,
            _snippet_sql(FTS_TABLE), [], words, query_stems(t.text for t in terms if not t.prefix),
        )  # fmt: skip
    if alternatives:
        if all(len(t.text) >= _TRIGRAM_MIN for t in terms):
            either = match_expression(alternatives)
            return Plan(
                TRIGRAM_TABLE, [f"{TRIGRAM_TABLE} MATCH %s"], [either], where, params, needs_session,
                _snippet_sql(TRIGRAM_TABLE), [], either,
            )  # fmt: skip
        cond, cond_params = _any_of_scanned(alternatives)
        return Plan(
            TRIGRAM_TABLE, [cond], cond_params, where, params, needs_session, None, [t.text for t in terms], None
        )
    # Trigram index: terms of 3+ characters through MATCH (substring), shorter ones by a
    # scan of the trigram table, which holds only the messages with non-ASCII text.
    long_terms = [t.text for t in terms if len(t.text) >= _TRIGRAM_MIN]
    short_terms = [t.text for t in terms if len(t.text) < _TRIGRAM_MIN]
    pre: list[str] = []
    pre_params: list[Any] = []
    match = " ".join(quote_term(t) for t in long_terms) if long_terms else None
    if match:
        pre.append(f"{TRIGRAM_TABLE} MATCH %s")
        pre_params.append(match)
    for term in short_terms:
        cond, cond_params = _short_condition(term)
        pre.append(cond)
        pre_params.extend(cond_params)
    return Plan(
        TRIGRAM_TABLE, pre, pre_params, where, params, needs_session,
        _snippet_sql(TRIGRAM_TABLE) if match else None,
        short_terms if match else [t.text for t in terms], match,
    )  # fmt: skip
