"""Conflict items in the inbox: a held memory write that contradicts an entry already saved, settled
by the person with Replace (the new entry takes the old one's place, logged "supersede"), Keep both
(the new entry is added beside it) or Reject (nothing is written). Replace and Keep both are each
one change in the change log, undone from its page like any other. The decision's form is in
knowledge/views/inbox_forms.py and its view (`decide_conflict`) in knowledge/views/reviews.py,
beside the inbox it re-renders when the decision is refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.contrib import messages
from django.http import HttpRequest
from django.urls import reverse
from django.utils.html import format_html

from knowledge.memory.ops import TARGETS
from knowledge.memory.store import MemoryStore
from knowledge.models import KnowledgeChange, PendingWrite
from knowledge.provenance import Provenance


@dataclass(frozen=True)
class ConflictView:
    """Both entries of a conflict item, as the inbox shows them."""

    old_target: str
    old_text: str
    new_target: str
    new_text: str
    old_still_there: bool

    @property
    def old_file(self) -> str:
        return TARGETS[self.old_target].filename if self.old_target in TARGETS else self.old_target


def new_entry(item: PendingWrite) -> tuple[str, str]:
    """(target, content) of the entry the held write adds."""
    args: dict[str, Any] = item.arguments if isinstance(item.arguments, dict) else {}
    raw = args.get("operations")
    ops: list[Any] = raw if isinstance(raw, list) else [args]
    content = next(
        (str(o["content"]) for o in ops if isinstance(o, dict) and o.get("action") == "add" and o.get("content")), ""
    )
    return str(args.get("target") or "memory"), content


def conflict_view(item: PendingWrite) -> ConflictView | None:
    if item.hold_kind != "conflict" or not isinstance(item.conflict, dict) or not item.conflict.get("text"):
        return None
    old_target, old_text = str(item.conflict.get("target") or "memory"), str(item.conflict["text"])
    new_target, new_text = new_entry(item)
    if not new_text or old_target not in TARGETS:
        return None
    there = old_text in MemoryStore().entries(old_target)
    return ConflictView(old_target, old_text, new_target, new_text, there)


def _latest_change(item: PendingWrite, target: str) -> KnowledgeChange | None:
    return (
        KnowledgeChange.objects.filter(kind="memory", target=target, actor="user", review_id=item.review_id)
        .order_by("-id")
        .first()
    )


def _replace(item: PendingWrite, conflict: ConflictView) -> bool:
    """The new entry takes the old one's place, in the old one's file (one change, one undo)."""

    def write(prov: Provenance) -> str:
        return json.dumps(MemoryStore().supersede(conflict.old_target, conflict.old_text, conflict.new_text, prov))

    return item.settle(write)


def _done(request: HttpRequest, item: PendingWrite, what: str, target: str) -> None:
    if item.status != "approved":
        error = json.loads(item.result or "{}").get("error", "") if item.result.startswith("{") else item.result
        messages.error(request, f"#{item.pk} could not be applied: {error or 'the store refused it'}")
        return
    change = _latest_change(item, target)
    if change is None:
        messages.info(request, f"#{item.pk}: {what}; nothing needed to change.")
        return
    link = reverse("change_detail", args=[change.pk])
    messages.success(
        request,
        format_html('#{}: {} (<a href="{}">change #{}</a>, which can be undone).', item.pk, what, link, change.pk),
    )


def settle(request: HttpRequest, item: PendingWrite, conflict: ConflictView, decision: str) -> None:
    """Carry out the person's decision on a waiting conflict item, and say what it did."""
    if decision == "reject":
        if item.reject():
            messages.info(request, f"Rejected #{item.pk}: the new entry was dropped, the old one stays.")
        return
    if decision == "replace" and conflict.old_still_there:
        if _replace(item, conflict):
            _done(request, item, f"“{conflict.old_text}” is superseded by “{conflict.new_text}”", conflict.old_target)
        return
    # Keep both (or Replace when the old entry is already gone): the held add, as it was written.
    if item.approve():
        where = "beside" if conflict.old_still_there else "(the old entry was already gone:"
        what = f"“{conflict.new_text}” was added {where} “{conflict.old_text}”" + (
            "" if conflict.old_still_there else ")"
        )
        _done(request, item, what, conflict.new_target)
