"""The evidence rule for the knowledge tools: who must show what, and what happens to a write that
does not show it (docs/EVIDENCE.md).

With `learning.evidence: required`:
- review and flush: every quote must be in a stored message the person typed (or, for skills, tool
  output), linked to it; the quoted sentences must support the entry (knowledge/verification/support.py);
  a skill must show its steps ran and worked; an add on the subject of an existing entry that says
  something else is a conflict. A write that fails any of these waits in the inbox with the reason,
  so nothing is lost and nothing unsupported enters the prompt. A write held in a review cannot be
  tried again with other quotes in the same review: the new attempt joins the held item.
- main agent: its memory writes must be supported by the person's current message (or, for its own
  notes, this turn's tool output); the turn's message is recorded as the evidence.
- the user (dashboard, approvals) and imports need no evidence.
With `off`, nothing is held (quotes found are still linked), except removals:
- a review's or flush's skill delete, disable, remove_file and memory remove go ahead only when the
  person asked for them in the conversation (quoted, knowledge/verification/removal.py); otherwise
  they wait in the inbox as a "Removal" hold, and approving one applies it as one undoable change.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from django.utils import timezone

from agent.tools.registry import ToolContext
from agent.tools.results import ToolResult
from hermes_site import config as hermes_config
from knowledge import versions
from knowledge.models import Message, PendingWrite
from knowledge.provenance import Provenance
from knowledge.verification import conflicts, evidence, removal, support
from knowledge.verification.documents import Located, statement_text
from knowledge.verification.lexicon import content_terms

EVIDENCE_PARAM: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Verbatim quotes from this conversation that support the write: whole sentences of the "
    "user's own words (for skills also tool output showing the steps worked). Required for background "
    "saves; never infer personal facts.",
}
BOTH_HOLD_PARAM: dict[str, Any] = {
    "type": "boolean",
    "description": "add: true when an existing entry on the same subject stays true beside the new one.",
}

# The reason's first word names the kind of hold the inbox shows.
UNSUPPORTED, CONFLICT, UNTESTED, REMOVAL = "Unsupported", "Conflict", "Untested", "Removal"
CONFLICT_ADVICE = (
    "Replace the old entry (action 'replace', old_text from it) if the new one is right, or, if both hold, add "
    "it again with both_hold: true."
)
# Two writes are the same attempt when their content terms overlap this much (Jaccard index).
SAME_ATTEMPT = 0.5


@dataclass(frozen=True)
class Decision:
    prov: Provenance
    held_reason: str = ""  # non-empty: do not save; hold in the inbox with this reason
    join_id: int | None = None  # an item held earlier in this review that this attempt joins
    advice: str = ""  # what the tool result tells the model to do about the hold
    conflict: dict[str, str] | None = None  # a Conflict hold: the existing entry {"target", "text"}


def required() -> bool:
    return hermes_config.get().learning.evidence == "required"


def _pairs(verdict: evidence.Verdict) -> tuple[tuple[str, int | None], ...]:
    return tuple((q.quote, q.message_id) for q in verdict.quotes)


def memory_ops(args: dict[str, Any]) -> list[dict[str, Any]]:
    ops = args.get("operations") if isinstance(args.get("operations"), list) else [args]
    return [op for op in ops or [] if isinstance(op, dict)]


def _entries(args: dict[str, Any]) -> list[str]:
    return [str(op["content"]) for op in memory_ops(args) if isinstance(op.get("content"), str) and op["content"]]


def _skill_text(args: dict[str, Any]) -> str:
    return " ".join(str(args.get(k) or "") for k in ("content", "new_string", "file_content"))


def decide(args: dict[str, Any], ctx: ToolContext, kind: str, existing: Sequence[tuple[str, str]] = ()) -> Decision:
    if ctx.actor == "agent":
        return _decide_agent(args, ctx, kind, existing)
    if ctx.actor not in ("review", "flush"):
        return Decision(ctx.provenance())
    verdict = evidence.check(args.get("evidence"), ctx.seen, kind, ctx.session_id)
    if not required():
        return Decision(ctx.provenance(_pairs(verdict) if verdict.supported else ()))
    earlier = _held_before(args, ctx, kind)
    if earlier is not None:
        return Decision(
            ctx.provenance(),
            f"{UNSUPPORTED}: tried again with other quotes after it was held (it joins #{earlier.pk}).",
            join_id=earlier.pk,
        )
    reason = verdict.reason or _unlinked(verdict)
    if not reason and kind == "memory":
        reason = next((r for r in (support.check(e, verdict.located) for e in _entries(args)) if r), "")
    if not reason and kind == "skill":
        reason = _skill_reason(args, verdict.located)
    if reason:
        return Decision(ctx.provenance(), reason if reason.startswith(UNTESTED) else f"{UNSUPPORTED}: {reason}")
    if kind == "memory":
        conflict = _conflict(args, existing, ctx)
        if conflict is not None:
            return conflict
    return Decision(ctx.provenance(_pairs(verdict)))


def _unlinked(verdict: evidence.Verdict) -> str:
    missing = [q.quote for q in verdict.quotes if q.message_id is None]
    if missing:
        return f"The quote {missing[0][:120]!r} could not be linked to a stored message of this conversation."
    return ""


def _skill_reason(args: dict[str, Any], located: Sequence[Located]) -> str:
    """A skill's quotes must be about the skill, and show that its steps ran and worked."""
    text = content_terms(_skill_text(args))
    for loc in located:
        if loc.role == "user" and support.quote_reason(loc.quote):
            return support.quote_reason(loc.quote)
    if not any(content_terms(loc.quote) & text for loc in located):
        return "The quotes share nothing with the skill."
    if not support.proves_it_ran(located):
        return (
            f"{UNTESTED}: nothing in the conversation shows these steps ran and worked (no tool output of "
            "them succeeding, and the person did not say it worked)."
        )
    return ""


def _conflict(args: dict[str, Any], existing: Sequence[tuple[str, str]], ctx: ToolContext) -> Decision | None:
    replaced = [str(op.get("old_text")) for op in memory_ops(args) if op.get("action") in ("replace", "remove")]
    standing = [(w, e) for w, e in existing if not any(old and old in e for old in replaced)]
    for op in memory_ops(args):
        if op.get("action") != "add" or not isinstance(op.get("content"), str):
            continue
        found = conflicts.find(op["content"], standing)
        if found is None or (args.get("both_hold") is True and not found.values_only):
            continue
        reason = f"{CONFLICT}: it is about the same thing as the {found.where} entry {found.text!r} "
        reason += "and says something else."
        if found.values_only:
            advice = "They differ only in a value, so both cannot hold: replace the old entry if the new one is right."
        else:
            advice = CONFLICT_ADVICE
        return Decision(ctx.provenance(), reason, advice=advice, conflict={"target": found.where, "text": found.text})
    return None


def _terms(args: Any, kind: str) -> tuple[str, set[str]]:
    """What identifies an attempt: a skill's name, or a memory write's content terms."""
    args = args if isinstance(args, dict) else {}
    if kind == "skill":
        return str(args.get("name") or ""), set()
    return "", content_terms(" ".join(_entries(args)), framing=False)


def _same_attempt(a: tuple[str, set[str]], b: tuple[str, set[str]]) -> bool:
    if a[0] or b[0]:
        return a[0] == b[0]
    shared = a[1] & b[1]
    return bool(shared) and len(shared) / len(a[1] | b[1]) >= SAME_ATTEMPT


def _settles(args: dict[str, Any]) -> bool:
    """Whether the write answers a conflict: it replaces the old entry, or says both hold."""
    return args.get("both_hold") is True or any(op.get("action") == "replace" for op in memory_ops(args))


def _held_before(args: dict[str, Any], ctx: ToolContext, kind: str) -> PendingWrite | None:
    """A write held earlier in this review that `args` tries again (a conflict may be settled instead)."""
    if ctx.review_id is None:
        return None
    held = PendingWrite.objects.filter(review_id=ctx.review_id, kind=kind, unsupported=True, status="pending")
    if kind == "memory" and _settles(args):
        held = held.exclude(reason__startswith=CONFLICT)
    attempt = _terms(args, kind)
    return next((item for item in held.order_by("id") if _same_attempt(attempt, _terms(item.arguments, kind))), None)


def settle_conflicts(args: dict[str, Any], ctx: ToolContext) -> None:
    """A conflict held earlier in this review that the review then settled (by replacing the old
    entry, or saying both hold) is withdrawn from the inbox: what it asked was answered."""
    if (ctx.review_id is None and ctx.session_id is None) or not _settles(args):
        return
    attempt = _terms(args, "memory")
    # This review's conflicts, or (for the chatting agent) this session's held outside any review.
    held = PendingWrite.objects.filter(
        session_id=ctx.session_id, review_id=ctx.review_id, kind="memory", status="pending", reason__startswith=CONFLICT
    )
    for item in held:
        if _same_attempt(attempt, _terms(item.arguments, "memory")):
            item.status, item.decided_at = "rejected", timezone.now()
            item.result = (
                "Withdrawn: the review settled the conflict itself (replaced the old entry or said both hold)."
            )
            item.save(update_fields=["status", "decided_at", "result"])


def decide_removal(args: dict[str, Any], ctx: ToolContext, kind: str, subject: str) -> Decision:
    """A review's or flush's removal (skill delete, disable, remove_file; memory remove) goes ahead
    only when the person asked for it in the conversation (knowledge/verification/removal.py);
    otherwise it is held for their approval, whatever `learning.evidence` says: the rule protects
    what the person already has, not what the model learned. The person and the chatting agent,
    acting on the person's own message, are not held."""
    if ctx.actor not in ("review", "flush"):
        return Decision(ctx.provenance())
    earlier = _removal_held_before(args, ctx, kind)
    if earlier is not None:  # other quotes for a removal already held do not release it
        return Decision(ctx.provenance(), f"{REMOVAL}: tried again after it was held.", join_id=earlier.pk)
    verdict = evidence.check(args.get("evidence"), ctx.seen, "memory", ctx.session_id)
    reason = verdict.reason or _unlinked(verdict) or removal.check(subject, verdict.located)
    if not reason:
        return Decision(ctx.provenance(_pairs(verdict)))
    what = "this removal" if kind == "memory" else f"this {args.get('action')}"
    return Decision(ctx.provenance(), f"{REMOVAL}: the person did not ask for {what} in the conversation. {reason}")


def _removal_key(args: Any) -> tuple[str, ...]:
    args = args if isinstance(args, dict) else {}
    ops = [(str(op.get("action")), str(op.get("old_text"))) for op in memory_ops(args)]
    return (str(args.get("action")), str(args.get("name")), str(args.get("file_path")), *map(str, ops))


def _removal_held_before(args: dict[str, Any], ctx: ToolContext, kind: str) -> PendingWrite | None:
    """The same removal held earlier in this review: a retry joins it instead of queueing it twice."""
    if ctx.review_id is None:
        return None
    held = PendingWrite.objects.filter(
        review_id=ctx.review_id, kind=kind, unsupported=True, status="pending", reason__startswith=REMOVAL
    )
    key = _removal_key(args)
    return next((item for item in held.order_by("id") if _removal_key(item.arguments) == key), None)


def _decide_agent(args: dict[str, Any], ctx: ToolContext, kind: str, existing: Sequence[tuple[str, str]]) -> Decision:
    raw = args.get("evidence")
    verdict = evidence.Verdict()
    if raw:
        verdict = evidence.check(raw, ctx.seen, kind, ctx.session_id, since_id=ctx.message_id)
    if not verdict.supported and ctx.user_text:
        verdict = evidence.of_message(ctx.message_id, ctx.user_text)
    prov = ctx.provenance(_pairs(verdict))
    if kind != "memory" or not required() or not ctx.user_text.strip():
        return Decision(prov)  # skills and turns without a message of the person's are not checked
    for entry in _entries(args):
        reason = support.check(entry, _turn_quotes(entry, ctx.user_text))
        if reason and args.get("target") == "memory" and not _shown_by_tools(entry, ctx):
            return Decision(prov, f"{UNSUPPORTED}: {reason}")
        if reason and args.get("target") != "memory":
            return Decision(prov, f"{UNSUPPORTED}: {reason}")
    conflict = _conflict(args, existing, ctx)
    return replace(conflict, prov=prov) if conflict else Decision(prov)


def _turn_quotes(entry: str, user_text: str) -> list[Located]:
    """The sentences of the person's current message that are about the entry, as its quotes."""
    said = statement_text(user_text)
    wanted = content_terms(entry, framing=False)
    about = [s for s in support.sentences(said) if content_terms(s) & wanted]
    return [Located(s, said) for s in about] or [Located(said.strip() or user_text, said)]


def _shown_by_tools(entry: str, ctx: ToolContext) -> bool:
    """The agent's own note may rest on this turn's tool output instead of the person's words."""
    if not ctx.session_id or ctx.message_id is None:
        return False
    outputs = Message.objects.filter(session_id=ctx.session_id, role="tool", id__gt=ctx.message_id)
    outputs = outputs.exclude(id__in=versions.off_path_of(ctx.session_id))  # not an earlier answer's tools
    located = [Located(c, c, "tool") for c in outputs.values_list("content", flat=True)]
    return bool(located) and not support.coverage_reason(entry, located)


def hold(kind: str, tool_name: str, args: dict[str, Any], ctx: ToolContext, decision: Decision | str) -> ToolResult:
    """Queue a write that may not be saved in the inbox; the tool result says it waits for the person
    and never coaches the model to find other quotes."""
    if isinstance(decision, str):
        decision = Decision(ctx.provenance(), decision)
    if decision.join_id is not None:
        pending = PendingWrite.objects.get(pk=decision.join_id)
        tried = json.dumps(args.get("evidence"), ensure_ascii=False)[:400]
        pending.reason += f"\nTried again in the same review with other quotes: {tried}"
        pending.save(update_fields=["reason"])
        verb = "Not done" if pending.reason.startswith(REMOVAL) else "Not saved"
        error = f"{verb}: it was already held for the person (#{pending.pk}); this attempt joins it."
        error += " Do not submit it again."
    elif decision.held_reason.startswith(REMOVAL):
        pending = _held(kind, tool_name, args, ctx, decision)
        error = f"Not done: {decision.held_reason} It was held for the person's approval in their inbox"
        error += f" (#{pending.pk}); nothing was removed. Do not submit it again."
    else:
        pending = _held(kind, tool_name, args, ctx, decision)
        error = f"Not saved: {decision.held_reason} It waits in the person's inbox for them to decide."
        error += f" {decision.advice}" if decision.advice else " Do not submit it again."
    return ToolResult.failure(error, changed=False, unsupported=True, pending_id=pending.pk)


def _held(kind: str, tool_name: str, args: dict[str, Any], ctx: ToolContext, decision: Decision) -> PendingWrite:
    return PendingWrite.objects.create(
        kind=kind,
        tool_name=tool_name,
        arguments=args,
        session_id=ctx.session_id,
        review_id=ctx.review_id,
        unsupported=True,
        reason=decision.held_reason,
        hold_kind=_hold_kind(decision.held_reason),
        conflict=decision.conflict or {},
    )


def _hold_kind(reason: str) -> str:
    first = reason.split(":", 1)[0].strip().casefold()
    kinds = {k.value for k in PendingWrite.Hold} - {"", "unsupported"}
    return first if first in kinds else PendingWrite.Hold.UNSUPPORTED
