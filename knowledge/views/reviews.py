"""Review runs and the approval inbox.

Approving a pending write (`PendingWrite.approve()`) applies it through the same tool adapters the
review would have used (registered with knowledge.approvals), so it meets the same validation,
lock and threat scan; the change is recorded with the review's and session's provenance.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from django.contrib import messages
from django.core.paginator import Paginator
from django.db.models import Count
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from knowledge import source_feedback, undo
from knowledge.diffing import DiffRow, side_by_side
from knowledge.memory.store import TARGETS, MemoryStore
from knowledge.models import KnowledgeChange, PendingWrite, ReviewRun
from knowledge.provenance import Provenance
from knowledge.skills import curator
from knowledge.skills.format import SkillError
from knowledge.skills.store import SkillStore
from knowledge.views.changes import UNDO_ERRORS
from knowledge.views.conflicts import ConflictView, conflict_view, settle
from knowledge.views.forms import errors_text
from knowledge.views.inbox_forms import (
    ApproveReviewForm,
    BulkDecisionForm,
    ConflictDecisionForm,
    PendingEditForm,
    ReviewFilterForm,
)

USER = Provenance(actor="user")
PAGE_SIZE = 30
RECENT_DECISIONS = 20

# skill_manage action -> the argument a person may edit before approving.
SKILL_EDIT_KEYS = {"create": "content", "edit": "content", "patch": "new_string", "write_file": "file_content"}


# ----- review runs ------------------------------------------------------------------------


@require_GET
def review_list(request: HttpRequest) -> HttpResponse:
    runs = (
        ReviewRun.objects.select_related("session")
        .order_by("-created_at", "-id")
        .annotate(change_count=Count("knowledge_changes"))
        .prefetch_related("knowledge_changes")
    )
    page = Paginator(runs, PAGE_SIZE).get_page(request.GET.get("page"))
    pending = PendingWrite.objects.filter(status="pending").count()
    return render(request, "knowledge/reviews.html", {"nav": "reviews", "page": page, "pending_count": pending})


@require_GET
def review_detail(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(ReviewRun.objects.select_related("session"), pk=pk)
    changes = KnowledgeChange.objects.filter(review=run).select_related("session").order_by("id")
    context = {
        "nav": "reviews",
        "run": run,
        "changes": changes,
        "undone": changes.filter(undone_by__isnull=False).exists(),
        "pending": [(p, outcome(p)) for p in PendingWrite.objects.filter(review=run).order_by("id")],
    }
    return render(request, "knowledge/review_detail.html", context)


@require_POST
def undo_review(request: HttpRequest, pk: int) -> HttpResponse:
    run = get_object_or_404(ReviewRun, pk=pk)
    try:
        done = undo.undo_review(run.pk, USER)
    except UNDO_ERRORS as exc:
        messages.error(request, f"Undo stopped: {exc}. Changes undone before the error stay undone.")
        return redirect("review_detail", pk=pk)
    if done:
        messages.success(request, f"Undid review #{run.pk}: {len(done)} file change(s) put back, each recorded.")
    else:
        messages.info(request, "Nothing to undo: the files are already as they were before this review.")
    return redirect("review_detail", pk=pk)


# ----- the approval inbox -----------------------------------------------------------------


@dataclass
class PendingPreview:
    """What a pending write would do, in a form a person can read."""

    item: PendingWrite
    action: str = ""
    subject: str = ""  # memory target or skill name
    operations: list[dict[str, Any]] = field(default_factory=list)
    text: str = ""
    rows: list[DiffRow] = field(default_factory=list)
    edit_key: str = ""  # "" -> the arguments are edited as JSON
    note: str = ""
    conflict: ConflictView | None = None  # a conflict item: both entries, and Replace / Keep both / Reject
    form: PendingEditForm | None = None  # a refused edit: its error, and the text as the person typed it
    decision: ConflictDecisionForm | None = None  # a refused conflict decision, with its error

    @property
    def reason_text(self) -> str:
        """Why it waits, in the item's own sentences; the badge names the kind, so a reason that
        starts by naming it again ("Conflict: it is about…") starts after that word."""
        reason = self.item.reason.strip()
        head, colon, rest = reason.partition(":")
        if colon and head.strip().casefold() in (self.item.hold_kind, PendingWrite.Hold.UNSUPPORTED):
            reason = rest.strip()
        return reason[:1].upper() + reason[1:]

    @property
    def edit_value(self) -> str:
        if self.form is not None and self.form.is_bound:
            return str(self.form[self.form.text_field].value() or "").replace("\r\n", "\n")  # as the files hold it
        args = self.item.arguments if isinstance(self.item.arguments, dict) else {}
        if self.edit_key:
            return str(args.get(self.edit_key, ""))
        return json.dumps(args, indent=2, ensure_ascii=False)


def _memory_preview(item: PendingWrite, args: dict[str, Any]) -> PendingPreview:
    batch = args.get("operations")
    single = not isinstance(batch, list)
    ops: list[Any] = (
        batch if isinstance(batch, list) else [{k: args[k] for k in ("action", "content", "old_text") if k in args}]
    )
    action = str(args.get("action", "batch")) if single else "batch"
    edit_key = "content" if single and action in ("add", "replace") else ""
    target = str(args.get("target", ""))
    shown = [_with_removed_entry(o, target) for o in ops if isinstance(o, dict)]
    return PendingPreview(item, action, target, shown, edit_key=edit_key)


def _with_removed_entry(op: dict[str, Any], target: str) -> dict[str, Any]:
    """A remove names its entry by a substring; the person deciding sees the whole entry it takes out."""
    old = op.get("old_text")
    if op.get("action") != "remove" or not isinstance(old, str) or not old or target not in TARGETS:
        return op
    matches = [e for e in MemoryStore().entries(target) if old in e]
    return {**op, "entry": matches[0]} if len(matches) == 1 else op


def _current_text(store: SkillStore, name: str, file_path: str | None) -> str:
    try:
        return store.read(name, file_path)
    except SkillError:
        return ""  # a new skill or file: the diff shows everything as added


def _skill_preview(item: PendingWrite, args: dict[str, Any]) -> PendingPreview:
    action, name = str(args.get("action", "")), str(args.get("name", ""))
    preview = PendingPreview(item, action, name, edit_key=SKILL_EDIT_KEYS.get(action, ""))
    file_path = args.get("file_path") or None
    current = "" if action == "create" else _current_text(SkillStore(), name, file_path)
    if action in ("create", "edit"):
        preview.text = str(args.get("content", ""))
        preview.rows = side_by_side(current, preview.text)
    elif action == "write_file":
        preview.rows = side_by_side(current, str(args.get("file_content", "")))
    elif action == "patch":
        old, new = str(args.get("old_string", "")), str(args.get("new_string", ""))
        patched = current.replace(old, new, -1 if args.get("replace_all") else 1) if old else current
        preview.rows = side_by_side(current, patched)
        if old and old not in current:
            preview.note = "The text to replace is not in the current file; approving will fail."
    return preview


def _curator_preview(item: PendingWrite, args: dict[str, Any]) -> PendingPreview:
    """An item of the curator's report: archive a skill, or merge it into another (the diff of the
    skill that keeps it, as it would be written now)."""
    name, into = str(args.get("name", "")), str(args.get("into", ""))
    if args.get("action") != "consolidate":
        return PendingPreview(item, "archive", name)
    shown = PendingPreview(item, "merge", name)
    try:
        merge = curator.plan_merge(SkillStore(), into, name)
    except SkillError as exc:
        shown.note = f"{exc} Approving will fail."
        return shown
    shown.rows = side_by_side(merge.before, merge.merged)
    if merge.lost:
        shown.note = "The merged skill would not keep everything now; approving will fail."
    return shown


def preview(item: PendingWrite) -> PendingPreview:
    args = item.arguments if isinstance(item.arguments, dict) else {}
    if item.kind == curator.KIND:
        return _curator_preview(item, args)
    if item.kind == source_feedback.KIND:  # a source of an answer the person marked (agent/chat/sources.py)
        return PendingPreview(item, str(args.get("action", "")), str(args.get("subject", "")))
    if item.kind == "memory":
        return replace(_memory_preview(item, args), conflict=conflict_view(item))
    return _skill_preview(item, args)


@dataclass(frozen=True)
class Outcome:
    """A decided write's result in plain words (the stored result is the tool's JSON)."""

    label: str
    tone: str  # badge colour: good | warn | bad
    text: str


def _result_data(result: str) -> dict[str, Any]:
    try:
        data = json.loads(result)
    except json.JSONDecodeError:
        return {"message": result}
    return data if isinstance(data, dict) else {"message": result}


def outcome(item: PendingWrite) -> Outcome:
    data = _result_data(item.result)
    said = str(data.get("message") or data.get("error") or "").strip().rstrip(".")
    if item.status == "rejected":
        return Outcome("rejected", "warn", "Rejected; nothing was written.")
    if item.status == "failed":
        return Outcome("failed", "bad", f"Not applied: {said}." if said else "Not applied.")
    if item.status == "pending":
        return Outcome("waiting", "warn", "Waiting for approval.")
    if data.get("changed") is False:
        return Outcome("no change", "warn", f"Approved, but there was nothing to save ({said}).")
    return Outcome("saved", "good", f"Approved and saved: {said}." if said else "Approved and saved.")


def _report(request: HttpRequest, item: PendingWrite, decided: bool) -> None:
    result = outcome(item)
    if not decided:
        messages.warning(request, f"#{item.pk} was already decided ({result.label}); nothing was done.")
    elif result.label == "saved":
        messages.success(request, f"Approved #{item.pk}: {_result_data(item.result).get('message', 'saved')}.")
    elif result.label == "no change":
        messages.info(request, f"#{item.pk}: {result.text}")
    elif item.status == "failed":
        messages.error(request, f"#{item.pk} could not be applied: {result.text.removeprefix('Not applied: ')}")
    else:
        messages.info(request, f"Rejected #{item.pk}.")


@dataclass
class ReviewGroup:
    """The inbox's items of one review (or of none: a session-end flush, the agent's own writes)."""

    run: ReviewRun | None
    items: list[PendingPreview] = field(default_factory=list)
    approve_all: bool = False  # offers "Approve all from this review"

    @property
    def approvable(self) -> int:
        """Items the single Approve decides (a conflict needs Replace, Keep both or Reject)."""
        return sum(1 for p in self.items if p.conflict is None)


def group_by_review(items: list[PendingPreview], *, narrowed: bool) -> list[ReviewGroup]:
    """Items grouped by the review that left them, in the order their first item arrived. A group
    with more than one item to approve offers to approve them all; narrowed to one review, the
    page offers it for any number, since the whole page is that review's."""
    groups: dict[int | None, ReviewGroup] = {}
    for p in items:
        group = groups.setdefault(p.item.review_id, ReviewGroup(p.item.review))
        group.items.append(p)
    for group in groups.values():
        group.approve_all = group.run is not None and group.approvable > (0 if narrowed else 1)
    return list(groups.values())


def inbox(
    request: HttpRequest,
    refused: PendingEditForm | ConflictDecisionForm | None = None,
    bulk: BulkDecisionForm | None = None,
    error: str = "",
) -> HttpResponse:
    """The inbox, grouped by review and narrowed to one by `?review=N`; a refused form is shown on its
    item (or on the bulk bar, or at the top) with its error, status 400."""
    narrow = ReviewFilterForm(request.GET)
    run = narrow.cleaned_data["review"] if narrow.is_valid() else None
    if not narrow.is_valid():
        messages.error(request, f"{errors_text(narrow)} Showing every waiting write.")
    waiting = PendingWrite.objects.filter(status="pending").select_related("session", "review__session")
    decided = PendingWrite.objects.exclude(status="pending").select_related("session")
    if run is not None:
        waiting, decided = waiting.filter(review=run), decided.filter(review=run)
    items = [preview(p) for p in waiting.order_by("id")]
    for p in items:
        if isinstance(refused, PendingEditForm) and refused.item.pk == p.item.pk:
            p.form = refused
        elif isinstance(refused, ConflictDecisionForm) and refused.item.pk == p.item.pk:
            p.decision = refused
    shown = any(p.form is refused or p.decision is refused for p in items)
    if refused is not None and not shown:
        messages.error(request, errors_text(refused))  # the item is decided now: say so at the top
    if error:
        messages.error(request, error)
    recent = [(d, outcome(d)) for d in decided.order_by("-decided_at")[:RECENT_DECISIONS]]
    selected = set(bulk["ids"].value() or []) if bulk is not None else set()
    context = {
        "nav": "pending",
        "items": items,
        "groups": group_by_review(items, narrowed=run is not None),
        "review": run,
        "count": len(items),
        "decided": recent,
        "bulk_error": errors_text(bulk) if bulk is not None else "",
        "selected": {str(i) for i in selected},
    }
    failed = refused is not None or bulk is not None or bool(error) or not narrow.is_valid()
    return render(request, "knowledge/pending.html", context, status=400 if failed else 200)


@require_GET
def pending_list(request: HttpRequest) -> HttpResponse:
    return inbox(request)


@require_POST
def pending_approve(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(PendingWrite, pk=pk)
    form = PendingEditForm(request.POST, item=item, edit_key=preview(item).edit_key)
    if item.status == "pending" and not form.is_valid():
        return inbox(request, refused=form)
    _report(request, item, item.status == "pending" and item.approve(form.edited))
    return redirect("pending")


@require_POST
def pending_reject(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(PendingWrite, pk=pk)
    _report(request, item, item.status == "pending" and item.reject())
    return redirect("pending")


@require_POST
def pending_bulk(request: HttpRequest) -> HttpResponse:
    form = BulkDecisionForm(request.POST)
    if not form.is_valid():
        return inbox(request, bulk=form)
    action = form.cleaned_data["action"]
    for item in form.chosen():
        _report(request, item, item.approve() if action == "approve" else item.reject())
    return redirect("pending")


@require_POST
def decide_conflict(request: HttpRequest, pk: int) -> HttpResponse:
    """Replace, Keep both or Reject on a conflict item (knowledge/views/conflicts.py does it)."""
    item = get_object_or_404(PendingWrite, pk=pk)
    conflict = conflict_view(item)
    form = ConflictDecisionForm(request.POST, item=item, waiting=conflict is not None and item.status == "pending")
    if not form.is_valid() or conflict is None:
        return inbox(request, refused=form)
    settle(request, item, conflict, form.cleaned_data["decision"])
    return redirect("pending")


@require_POST
def pending_approve_review(request: HttpRequest) -> HttpResponse:
    """Approve all from this review: each waiting write of the review, one by one through the same
    `PendingWrite.approve()` as its own Approve. A second submit finds nothing waiting and says so."""
    form = ApproveReviewForm(request.POST)
    if not form.is_valid():
        return inbox(request, error=f"{errors_text(form)} Nothing was approved.")
    run: ReviewRun = form.cleaned_data["review"]
    waiting = list(PendingWrite.objects.filter(review=run, status="pending").order_by("id"))
    conflicts = [item for item in waiting if conflict_view(item) is not None]
    approved, failed = 0, []
    for item in waiting:
        if item in conflicts or not item.approve():  # a conflict waits for its choice; another tab may have decided
            continue
        if item.status == "approved":
            approved += 1
        else:
            failed.append(item)
    if approved:
        messages.success(request, f"Approved {approved} write{'s' if approved != 1 else ''} from review #{run.pk}.")
    for item in failed:
        messages.error(request, f"#{item.pk} could not be applied: {outcome(item).text.removeprefix('Not applied: ')}")
    if conflicts:
        which = "1 conflict still waits" if len(conflicts) == 1 else f"{len(conflicts)} conflicts still wait"
        messages.info(request, f"{which}: choose Replace, Keep both or Reject on each.")
    if not approved and not failed and not conflicts:
        messages.info(request, f"Nothing from review #{run.pk} was waiting; nothing was done.")
    return redirect(f"{reverse('pending')}?review={run.pk}")
