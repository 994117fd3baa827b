"""Change log pages (SPEC §7): every change to memory and skills, a side-by-side diff, undo.

Undo goes through knowledge.changelog, which dispatches to the store that owns the file, so the
undo takes the same lock and is itself recorded as a change.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from knowledge import changelog
from knowledge.diffing import side_by_side
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance
from knowledge.skill_format import SkillError

USER = Provenance(actor="user")
PAGE_SIZE = 50
# What an undo can raise: the stores' refusals, and the file system's.
UNDO_ERRORS = (changelog.UndoError, SkillError, ValueError, OSError)
FILTERS = ("kind", "actor", "review", "session", "target")


def filtered_changes(params: dict[str, str]) -> QuerySet[KnowledgeChange]:
    qs = KnowledgeChange.objects.select_related("session", "review")
    for key in FILTERS:
        value = params.get(key, "").strip()
        if not value:
            continue
        if key == "review":
            if not value.isdigit():
                return qs.none()
            qs = qs.filter(review_id=int(value))
        elif key == "session":
            qs = qs.filter(session_id=value)
        else:
            qs = qs.filter(**{key: value})
    return qs


@require_GET
def change_list(request: HttpRequest) -> HttpResponse:
    params = {key: request.GET.get(key, "") for key in FILTERS}
    page = Paginator(filtered_changes(params), PAGE_SIZE).get_page(request.GET.get("page"))
    query = urlencode({k: v for k, v in params.items() if v})  # keeps the filters across pages
    context = {
        "nav": "changes",
        "page": page,
        "changes": page.object_list,
        "params": params,
        "query": query,
        "kinds": KnowledgeChange.KINDS,
        "actors": KnowledgeChange.ACTORS,
    }
    return render(request, "knowledge/changes.html", context)


@require_GET
def change_detail(request: HttpRequest, pk: int) -> HttpResponse:
    change = get_object_or_404(KnowledgeChange.objects.select_related("session", "review", "undoes"), pk=pk)
    binary = change.binary
    context = {
        "nav": "changes",
        "change": change,
        "binary": binary,
        "rows": [] if binary else side_by_side(change.before, change.after),
        "undone_by": change.undone_by.order_by("-id"),
    }
    return render(request, "knowledge/change_detail.html", context)


@require_POST
def undo_change(request: HttpRequest, pk: int) -> HttpResponse:
    change = get_object_or_404(KnowledgeChange, pk=pk)
    try:
        done = changelog.undo(change, USER)
    except UNDO_ERRORS as exc:
        messages.error(request, f"Undo failed: {exc}")
        return redirect("change_detail", pk=pk)
    if done is None:
        messages.info(request, "Nothing to undo: the file is already as it was before this change.")
        return redirect("change_detail", pk=pk)
    messages.success(request, f"Undid change #{change.pk}; this undo is change #{done.pk} and can itself be undone.")
    return redirect("change_detail", pk=done.pk)
