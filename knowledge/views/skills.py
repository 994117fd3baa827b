"""Skills pages: list with search, filters and bulk actions; create; view, edit, toggle, delete.
The list also shows what the curator sees (stale, pinned) and the archived skills
(knowledge/views/curator.py pins, restores and asks for a report).

Every write goes through SkillStore with Provenance(actor="user"): the page validates exactly as
the agent's skill_manage does, and each write lands in the change log.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods, require_POST
from django_htmx.http import HttpResponseClientRedirect

from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.provenance import Provenance
from knowledge.skills import archive, curator, outcomes
from knowledge.skills.format import ParsedSkill, SkillError, parse_skill_md
from knowledge.skills.store import SkillInfo, SkillStore
from knowledge.views.forms import NewSkillForm, SkillBulkForm, SkillEditForm, errors_text

USER = Provenance(actor="user")
STATUSES = ("enabled", "disabled", "broken")
HISTORY_LIMIT = 100
NEW_SKILL_TEMPLATE = """---
name: {name}
description: One sentence saying what this skill does and when to use it.
---
# {name}

1. The first step.
2. The next step.
"""


@dataclass(frozen=True)
class SkillRow:
    info: SkillInfo
    usage: SkillUsage | None
    outcomes: outcomes.Stats | None = None
    curation: curator.SkillState | None = None  # stale or not, as the curator sees it now


def _rows(request: HttpRequest, store: SkillStore) -> list[SkillRow]:
    """The skills matching the page's search box and filters."""
    q = request.GET.get("q", "").strip().lower()
    status = request.GET.get("status", "")
    category = request.GET.get("category", "")
    infos = [
        s
        for s in store.list()
        if (not q or q in s.name.lower() or q in s.description.lower())
        and (status != "enabled" or s.usable)
        and (status != "disabled" or not s.enabled)
        and (status != "broken" or s.broken)
        and (not category or s.category == category)
    ]
    usage = {u.name: u for u in SkillUsage.objects.filter(name__in=[s.name for s in infos])}
    verified = outcomes.stats([s.name for s in infos])
    states = curator.assess(store, store.config, timezone.now())
    return [SkillRow(s, usage.get(s.name), verified.get(s.name), states.get(s.name)) for s in infos]


def _list_page(request: HttpRequest, store: SkillStore, bulk: SkillBulkForm | None = None) -> HttpResponse:
    """The list; a refused bulk action comes back with its error and the skills still ticked."""
    rows = _rows(request, store)
    if request.htmx and request.htmx.target == "skill-rows":
        return render(request, "knowledge/_skill_rows.html", {"rows": rows})
    context = {
        "nav": "skills",
        "rows": rows,
        "categories": sorted({s.category for s in store.list() if s.category}),
        "statuses": STATUSES,
        "q": request.GET.get("q", ""),
        "status": request.GET.get("status", ""),
        "category": request.GET.get("category", ""),
        "archived": archive.archived(store),
        "curator": store.config.curator,
        "bulk_error": errors_text(bulk) if bulk is not None else "",
        "selected": set(bulk["names"].value() or []) if bulk is not None else set(),
    }
    return render(request, "knowledge/skills.html", context, status=400 if bulk is not None else 200)


@require_GET
def skill_list(request: HttpRequest) -> HttpResponse:
    return _list_page(request, SkillStore())


@require_POST
def bulk(request: HttpRequest) -> HttpResponse:
    store = SkillStore()
    form = SkillBulkForm(request.POST, store=store)
    if not form.is_valid():
        return _list_page(request, store, bulk=form)
    done, refused = form.save()
    for sentence in refused:
        messages.error(request, sentence)
    if done:
        action = form.cleaned_data["action"]
        messages.success(request, f"{action.capitalize()}d {len(done)} skill(s): {', '.join(done)}")
    return redirect("skills")


@require_http_methods(["GET", "POST"])
def new_skill(request: HttpRequest) -> HttpResponse:
    store = SkillStore()
    if request.method == "POST":
        form = NewSkillForm(request.POST, store=store)
        if form.is_valid() and form.save():
            name = form.cleaned_data["name"]
            messages.success(request, f"Skill '{name}' created")
            return redirect("skill_detail", name=name)
    else:
        form = NewSkillForm(store=store, initial={"content": NEW_SKILL_TEMPLATE.format(name="my-skill")})
    return render(request, "knowledge/skill_new.html", {"nav": "skills", "form": form})


def _get(store: SkillStore, name: str) -> SkillInfo:
    try:
        return store.get(name)
    except SkillError as exc:
        raise Http404(str(exc)) from exc


def _read(store: SkillStore, name: str, file_path: str | None = None) -> tuple[str, str]:
    """(text, error): a file that cannot be shown as text explains why instead of failing the page."""
    try:
        return store.read(name, file_path), ""
    except SkillError as exc:
        return "", str(exc)


def _parsed(raw: str) -> ParsedSkill | None:
    try:
        return parse_skill_md(raw)
    except SkillError:
        return None  # the skill's own `error` already says why; the raw text is shown instead


def _detail_context(store: SkillStore, info: SkillInfo, file_path: str, form: SkillEditForm | None) -> dict[str, Any]:
    raw, read_error = _read(store, info.name)
    shown_file, file_error = _read(store, info.name, file_path) if file_path else ("", "")
    return {
        "nav": "skills",
        "skill": info,
        "raw": raw,
        "read_error": read_error,
        "parsed": _parsed(raw),
        "files": store.file_sizes(info.name),
        "file_path": file_path,
        "file_text": shown_file,
        "file_error": file_error,
        "form": form or SkillEditForm(store=store, skill=info, initial={"content": raw}),
        "usage": SkillUsage.objects.filter(name=info.name).first(),
        "history": KnowledgeChange.objects.filter(kind="skill", target=info.name).select_related("session")[
            :HISTORY_LIMIT
        ],
    }


@require_GET
def skill_detail(request: HttpRequest, name: str) -> HttpResponse:
    store = SkillStore()
    info = _get(store, name)
    context = _detail_context(store, info, request.GET.get("file", ""), None)
    return render(request, "knowledge/skill_detail.html", context)


@require_POST
def edit_skill(request: HttpRequest, name: str) -> HttpResponse:
    store = SkillStore()
    info = _get(store, name)
    form = SkillEditForm(request.POST, store=store, skill=info)
    if not (form.is_valid() and form.save()):
        template = "knowledge/_skill_editor.html" if request.htmx else "knowledge/skill_detail.html"
        return render(request, template, _detail_context(store, info, "", form))
    messages.success(request, f"Skill '{name}' updated")
    if request.htmx:
        return HttpResponseClientRedirect(request.path.removesuffix("edit/"))
    return redirect("skill_detail", name=name)


@require_POST
def toggle_skill(request: HttpRequest, name: str) -> HttpResponse:
    store = SkillStore()
    info = _get(store, name)
    try:
        if info.enabled:
            store.disable(name, prov=USER)
        else:
            store.enable(name, prov=USER)
    except SkillError as exc:
        messages.error(request, str(exc))
    else:
        messages.success(request, f"Skill '{name}' {'disabled' if info.enabled else 'enabled'}")
    return redirect("skill_detail", name=name)


@require_POST
def delete_skill(request: HttpRequest, name: str) -> HttpResponse:
    store = SkillStore()
    _get(store, name)
    try:
        store.delete(name, prov=USER)
    except SkillError as exc:
        messages.error(request, str(exc))
        return redirect("skill_detail", name=name)
    messages.success(request, f"Skill '{name}' deleted (undo it from the change log)")
    return redirect("skills")
