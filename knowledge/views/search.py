"""History search page: results as you type, filters, counts, pagination.

The page is one GET form so it works without JavaScript; htmx re-requests it on input and
swaps in only the results partial (`request.htmx`). Everything a person types reaches the
index through `knowledge.search`'s sanitiser, and bad filter values are ignored, not errors.
"""

from __future__ import annotations

from datetime import date
from typing import Any
from urllib.parse import urlencode

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from knowledge import search, versions
from knowledge.models import ChatSession, Message
from knowledge.search import meaning
from knowledge.search import results as search_results
from knowledge.search import sanitize as query

PER_PAGE = 20
ROLES = [r for r, _ in Message.ROLES if r != "system"]
SOURCES = [s for s, _ in ChatSession.SOURCES]


def _date(value: str) -> date | None:
    try:
        return date.fromisoformat(value.strip()) if value.strip() else None
    except ValueError:
        return None


def _page(value: str) -> int:
    try:
        return max(1, min(int(value), search_results.COUNT_CAP // PER_PAGE + 1))
    except ValueError:
        return 1


def _filters(request: HttpRequest) -> dict[str, Any]:
    get = request.GET
    return {
        # NUL cannot be shown back in the input; the sanitiser would drop it anyway.
        "q": get.get("q", "").replace("\x00", " ")[: query.MAX_QUERY_CHARS],
        "date_from": _date(get.get("from", "")),
        "date_to": _date(get.get("to", "")),
        "roles": [r for r in get.getlist("role") if r in ROLES],
        "source": get.get("source", "") if get.get("source", "") in SOURCES else "",
        "page": _page(get.get("page", "1")),
    }


def _query_string(f: dict[str, Any], page: int) -> str:
    params: list[tuple[str, str]] = [("q", f["q"])]
    if f["date_from"]:
        params.append(("from", f["date_from"].isoformat()))
    if f["date_to"]:
        params.append(("to", f["date_to"].isoformat()))
    params += [("role", r) for r in f["roles"]]
    if f["source"]:
        params.append(("source", f["source"]))
    if page > 1:
        params.append(("page", str(page)))
    return urlencode(params)


def search_context(f: dict[str, Any]) -> dict[str, Any]:
    sources = [f["source"]] if f["source"] else None
    ctx: dict[str, Any] = {"f": f, "roles": ROLES, "sources": SOURCES, "nav": "search"}
    # Only words to leave out would list every other message: say so instead of searching.
    ctx["problem"] = query.exclusion_problem(f["q"])
    if ctx["problem"] or not query.parse_terms(f["q"]):
        ctx["recent"] = search.recent_sessions(limit=PER_PAGE, sources=sources)
        return ctx
    result = search.search_messages(
        f["q"],
        limit=PER_PAGE,
        offset=(f["page"] - 1) * PER_PAGE,
        date_from=f["date_from"],
        date_to=f["date_to"],
        roles=f["roles"] or None,
        sources=sources,
    )
    pages = max(1, -(-result.total // PER_PAGE))
    chats = {hit.session_id for hit in result.results}
    ctx.update(
        result=result,
        # Each message is found once; one not in the version its chat shows says so.
        other_versions=_other_versions(chats),
        first_index=(f["page"] - 1) * PER_PAGE + 1,
        prev_qs=_query_string(f, f["page"] - 1) if f["page"] > 1 else None,
        next_qs=_query_string(f, f["page"] + 1) if f["page"] < pages and result.results else None,
        pages=pages,
        hint="" if result.total or result.titles else query.syntax_hint(f["q"]),
        words_only="" if result.meaning else _why_words_only(),
    )
    return ctx


def _other_versions(chats: set[str]) -> set[int]:
    """The messages of these chats that are not in the version each chat shows. One query reads
    the shape of the page's chats (each message's parent and role, and the chat's chosen leaf);
    only a chat with a fork (a turn answered or edited more than once) or a version chosen by hand
    can have any, and only those are walked."""
    if not chats:
        return set()
    shapes: dict[str, list[tuple[int, int | None, str]]] = {}
    leaves: dict[str, int | None] = {}
    rows = (
        Message.objects.filter(session_id__in=chats)
        .order_by()
        .values_list("session_id", "id", "parent_id", "role", "session__leaf_id")
    )
    for chat, pk, parent, role, leaf in rows:
        shapes.setdefault(chat, []).append((pk, parent, role))
        leaves[chat] = leaf
    off: set[int] = set()
    for chat, shape in shapes.items():
        if leaves[chat] is None and len({parent for _, parent, _ in shape}) == len(shape):
            continue  # no two messages share a parent: one version, all of it shown
        tree = versions.Tree.of(shape)
        off |= set(tree.parents) - set(tree.path(tree.leaf(leaves[chat])))
    return off


def _why_words_only() -> str:
    """Why this search found nothing by meaning: none configured, or the server failed just now."""
    return meaning.embedder().why_not or "the embedding server did not answer just now"


@require_GET
def search_page(request: HttpRequest) -> HttpResponse:
    ctx = search_context(_filters(request))
    # A request from the search box (not a boosted page load) only needs the results.
    if getattr(request, "htmx", False) and request.headers.get("HX-Target") == "search-results":
        return render(request, "knowledge/_search_results.html", ctx)
    return render(request, "knowledge/search.html", ctx)
