"""Memory page: both targets side by side, edited in place through MemoryStore.

Every write goes through the store with Provenance(actor="user"), so the page gets the agent's
lock, limits and threat scan; the entry form (knowledge/views/forms.py) runs the store's checks
first and words a refusal for a person (knowledge/views/memory_forms.py); so does the merge of two
near-duplicate entries, whose refusal re-renders the page with the pair, the error and the text typed.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from foundation import config as hermes_config
from knowledge import mem0_store, memory_providers
from knowledge.memory.duplicates import memory_duplicate_pairs
from knowledge.memory.ops import ENTRY_DELIMITER
from knowledge.memory.store import TARGETS, MemoryStore, parse
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance
from knowledge.verification.threat_scan import ThreatHit
from knowledge.views.changes import entry_changes
from knowledge.views.forms import errors_text
from knowledge.views.memory_forms import MemoryDeleteForm, MemoryEntryForm, MemoryMergeForm

USER = Provenance(actor="user")
# How far back to look for the change that introduced an entry; older entries show "unknown".
ORIGIN_SCAN_LIMIT = 2000
WARN_RATIO = 0.8


@dataclass
class EntryView:
    target: str
    index: int
    text: str
    flag: ThreatHit | None = None
    origin: KnowledgeChange | None = None
    replaced: str = ""  # the entry this one took the place of, when its origin replaced one
    editing: bool = False
    form: MemoryEntryForm | None = None  # the edit form, bound to what was typed after a refusal
    error: str = ""  # a refused delete
    others: int = 0  # characters the file holds besides this entry (for the live counter)


@dataclass
class Panel:
    target: str
    label: str
    filename: str
    enabled: bool
    chars: int
    limit: int
    usage: str
    entries: list[EntryView]
    message: str = ""
    add_form: MemoryEntryForm | None = None  # bound to what was typed after a refusal
    flagged: int = field(default=0)

    @property
    def level(self) -> str:
        if self.chars >= self.limit:
            return "full"
        return "warn" if self.chars >= WARN_RATIO * self.limit else "ok"

    @property
    def warn_at(self) -> int:
        return int(WARN_RATIO * self.limit)

    @property
    def used_before_add(self) -> int:
        """Characters already used, counting the separator a new entry would bring."""
        return self.chars + (len(ENTRY_DELIMITER) if self.entries else 0)


def entry_origins(target: str, entries: list[str]) -> dict[str, KnowledgeChange]:
    """entry text -> the latest change whose `after` has the entry and whose `before` did not."""
    wanted = set(entries)
    found: dict[str, KnowledgeChange] = {}
    changes = (
        KnowledgeChange.objects.filter(kind="memory", target=target)
        .select_related("session", "review")
        .order_by("-id")[:ORIGIN_SCAN_LIMIT]
    )
    for change in changes:
        missing = wanted - found.keys()
        if not missing:
            break
        for entry in missing & (set(parse(change.after)) - set(parse(change.before))):
            found[entry] = change
    return found


def replaced_entry(change: KnowledgeChange | None, entry: str) -> str:
    """The entry `change` replaced with `entry`, from the change's before and after ("" if it added
    one): a supersede or a one-for-one replace pairs its only removed entry, a batch the most alike."""
    if change is None:
        return ""
    old, new = parse(change.before), parse(change.after)
    removed = [e for e in old if e not in new]
    if len(removed) == 1 and change.action in ("supersede", "replace"):
        return removed[0]
    return next((c.before for c in entry_changes(change.before, change.after) if c.after == entry and c.before), "")


def build_panel(store: MemoryStore, target: str, **state: Any) -> Panel:
    """A target's panel; `state` carries one entry's edit/error state or the add form's."""
    spec = store.spec(target)
    texts = store.entries(target)
    flags = {f.index: f.hit for f in store.flagged_entries(target)}
    origins = entry_origins(target, texts)
    chars, limit = store.usage(target)
    entries = [
        EntryView(target, i, t, flags.get(i), origins.get(t), replaced_entry(origins.get(t), t), others=chars - len(t))
        for i, t in enumerate(texts)
    ]
    entry_state: Mapping[str, Any] = state.pop("entry", {})
    if entry_state and 0 <= entry_state["index"] < len(entries):
        for key, value in entry_state.items():
            setattr(entries[entry_state["index"]], key, value)
    elif entry_state.get("form") is not None or entry_state.get("error"):
        # The entry itself is gone: say why at the top of the panel.
        form = entry_state.get("form")
        state["message"] = errors_text(form) if form is not None else entry_state["error"]
    return Panel(
        target=target,
        label=spec.label,
        filename=spec.filename,
        enabled=store.is_enabled(target),
        chars=chars,
        limit=limit,
        usage=store.usage_text(target),
        entries=entries,
        flagged=len(flags),
        **state,
    )


def mem0_listing() -> mem0_store.Listing | None:
    """mem0's memories, shown read-only below the files when mem0 is the memory provider."""
    config = hermes_config.get()
    return mem0_store.listing(config) if "mem0" in memory_providers.configured_names(config) else None


def _store_for(target: str) -> MemoryStore:
    if target not in TARGETS:
        raise Http404("unknown memory target")
    return MemoryStore()


def _respond(request: HttpRequest, store: MemoryStore, target: str, ok: bool, **state: Any) -> HttpResponse:
    """htmx gets the target's panel; a plain form post gets a redirect (ok) or the page with the error."""
    if request.htmx:
        return render(request, "knowledge/_memory_panel.html", {"panel": build_panel(store, target, **state)})
    if ok:
        return redirect("memory")
    panels = [build_panel(store, t, **state) if t == target else build_panel(store, t) for t in TARGETS]
    return render(request, "knowledge/memory.html", {"nav": "memory", "panels": panels, "mem0": mem0_listing()})


def _page(request: HttpRequest, merge: MemoryMergeForm | None = None, status: int = 200) -> HttpResponse:
    """The whole page; a refused merge is shown on its pair, with the text the person typed."""
    store = MemoryStore()
    pairs = memory_duplicate_pairs(store)
    duplicates = [
        (a, b, merge if merge is not None and merge.matches(a.where, a.text, b.where, b.text) else None)
        for a, b in pairs
    ]
    if merge is not None and not any(form for _, _, form in duplicates):
        messages.error(request, errors_text(merge))  # the pair is gone from the files: say so at the top
    context = {
        "nav": "memory",
        "panels": [build_panel(store, t) for t in TARGETS],
        "duplicates": duplicates,
        "mem0": mem0_listing(),
    }
    return render(request, "knowledge/memory.html", context, status=status)


@require_GET
def memory_page(request: HttpRequest) -> HttpResponse:
    return _page(request)


@require_GET
def entry(request: HttpRequest, target: str, index: int) -> HttpResponse:
    """One entry, shown (Cancel) or as an edit form (?edit=1)."""
    store = _store_for(target)
    panel = build_panel(store, target)
    if index >= len(panel.entries):
        panel.message = "That entry is gone from the file; the list was reloaded."
        return render(request, "knowledge/_memory_panel.html", {"panel": panel})
    item = panel.entries[index]
    item.editing = request.GET.get("edit") == "1"
    item.form = MemoryEntryForm(store=store, target=target, index=index, initial={"content": item.text})
    return render(request, "knowledge/_memory_entry.html", {"entry": item, "panel": panel})


@require_POST
def add_entry(request: HttpRequest, target: str) -> HttpResponse:
    store = _store_for(target)
    form = MemoryEntryForm(request.POST, store=store, target=target)
    if form.is_valid() and (result := form.save()) is not None:
        return _respond(request, store, target, True, message=result["message"])
    return _respond(request, store, target, False, add_form=form)


@require_POST
def edit_entry(request: HttpRequest, target: str, index: int) -> HttpResponse:
    store = _store_for(target)
    form = MemoryEntryForm(request.POST, store=store, target=target, index=index)
    if form.is_valid() and (result := form.save()) is not None:
        return _respond(request, store, target, True, message=result["message"])
    return _respond(request, store, target, False, entry={"index": index, "editing": True, "form": form}, message="")


@require_POST
def delete_entry(request: HttpRequest, target: str, index: int) -> HttpResponse:
    store = _store_for(target)
    form = MemoryDeleteForm(request.POST)
    form.is_valid()  # nothing to refuse: `expected` is optional text
    result = store.delete_entry(target, index, USER, expected=form.cleaned_data.get("expected"))
    if result["success"]:
        return _respond(request, store, target, True, message="Entry deleted · " + result["message"])
    return _respond(request, store, target, False, entry={"index": index, "error": result["error"]})


@require_POST
def memory_merge(request: HttpRequest) -> HttpResponse:
    """Merge two near-duplicate entries: the kept one takes the merged text, the other goes."""
    form = MemoryMergeForm(request.POST, store=MemoryStore())
    if form.is_valid() and form.save():
        messages.success(request, "Merged the two entries into one.")
        return redirect("memory")
    return _page(request, merge=form, status=400)
