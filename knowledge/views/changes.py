"""Change log pages: every change to memory and skills, a side-by-side diff, undo.

Undo goes through knowledge.undo, which dispatches to the store that owns the file, so the
undo takes the same lock and is itself recorded as a change.
"""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from knowledge import undo
from knowledge.diffing import side_by_side
from knowledge.memory.store import parse
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance
from knowledge.skills.format import SkillError

USER = Provenance(actor="user")
PAGE_SIZE = 50
# What an undo can raise: the stores' refusals, and the file system's.
UNDO_ERRORS = (undo.UndoError, SkillError, ValueError, OSError)
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


# Changes that touch no file's text: what happened, said instead of an empty diff.
NO_TEXT_CHANGE = {
    "disable": "Turned off: the skill is left out of the prompt and the agent's tools. Its files are unchanged.",
    "enable": "Turned on: the skill is back in the prompt and the agent's tools. Its files are unchanged.",
    "archive": "Archived: the folder moved into skills/.archive/, out of the prompt, the tools and the slash menu. "
    "Its files are unchanged; restore it from the Skills page or undo this change.",
    "restore": "Restored from skills/.archive/: the skill is back in the prompt and the agent's tools. "
    "Its files are unchanged.",
}


@dataclass(frozen=True)
class EntryChange:
    """One memory entry added, removed or changed (memory files are entries, not lines)."""

    kind: str  # "added" | "removed" | "changed"
    before: str = ""
    after: str = ""


# How alike an old and a new entry must be to count as one entry changed, not one removed
# and another added (an entry extended or shortened always counts as changed).
SAME_ENTRY_RATIO = 0.6


def _alike(old: str, new: str) -> float:
    if old in new or new in old:
        return 1.0
    return difflib.SequenceMatcher(a=old, b=new, autojunk=False).ratio()


def _pair(old: list[str], new: list[str]) -> list[EntryChange]:
    """Within a replaced run, each old entry pairs with its most similar unpaired new one."""
    out: list[EntryChange] = []
    unpaired = list(new)
    for text in old:
        scored = [(_alike(text, n), n) for n in unpaired]
        best = max(scored, default=(0.0, ""))
        if best[0] >= SAME_ENTRY_RATIO:
            unpaired.remove(best[1])
            out.append(EntryChange("changed", text, best[1]))
        else:
            out.append(EntryChange("removed", before=text))
    return out + [EntryChange("added", after=text) for text in unpaired]


def entry_changes(before: str, after: str) -> list[EntryChange]:
    old, new = parse(before), parse(after)
    out: list[EntryChange] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if tag != "equal":
            out.extend(_pair(old[i1:i2], new[j1:j2]))
    return out


def _file_line(change: KnowledgeChange) -> str:
    if change.action in NO_TEXT_CHANGE:
        return "unchanged"
    if not change.existed_before:
        return "created by this change"
    return "removed by this change" if not change.exists_after else "changed"


def _what_changed(change: KnowledgeChange) -> dict[str, Any]:
    if change.action in NO_TEXT_CHANGE:
        return {"note": NO_TEXT_CHANGE[change.action]}
    if change.binary:
        return {"note": "A binary file: no text diff."}
    if change.kind == "memory":
        return {"entries": entry_changes(change.before, change.after), "memory": True}
    return {"rows": side_by_side(change.before, change.after)}


@require_GET
def change_detail(request: HttpRequest, pk: int) -> HttpResponse:
    change = get_object_or_404(KnowledgeChange.objects.select_related("session", "review", "undoes"), pk=pk)
    context = {
        "nav": "changes",
        "change": change,
        "file_line": _file_line(change),
        "undone_by": change.undone_by.order_by("-id"),
        **_what_changed(change),
    }
    return render(request, "knowledge/change_detail.html", context)


@require_POST
def undo_change(request: HttpRequest, pk: int) -> HttpResponse:
    change = get_object_or_404(KnowledgeChange, pk=pk)
    try:
        done = undo.undo(change, USER)
    except UNDO_ERRORS as exc:
        messages.error(request, f"Undo failed: {exc}")
        return redirect("change_detail", pk=pk)
    if done is None:
        messages.info(request, "Nothing to undo: the file is already as it was before this change.")
        return redirect("change_detail", pk=pk)
    messages.success(request, f"Undid change #{change.pk}; this undo is change #{done.pk} and can itself be undone.")
    return redirect("change_detail", pk=done.pk)
