"""The inbox side of admission: a write that may not be saved waits for the person.

A held write becomes one `PendingWrite` with its kind (a choice, `PendingWrite.Hold`), a reason in
sentences and the signals its words gave. A secret's value is redacted before it is stored. A write
tried again in the same review, whatever it changed (other quotes, "both hold"), joins the item
already held instead of making a second one; a conflict the review then settles itself (by
replacing the old entry) is withdrawn. The tool result tells the model the write waits, and never
coaches it to find other quotes.
"""

from __future__ import annotations

import json
from typing import Any

from django.utils import timezone

from agent.admission.provenance import Decision, attempt_terms, held_before, memory_ops, same_attempt
from agent.tools.registry import ToolContext
from agent.tools.results import ToolResult
from knowledge.models import PendingWrite
from knowledge.verification import secrets as secret_scan

Hold = PendingWrite.Hold


def _settles(args: dict[str, Any]) -> bool:
    """Whether the write answers a conflict by replacing the old entry."""
    return any(op.get("action") == "replace" for op in memory_ops(args))


def settle_conflicts(args: dict[str, Any], ctx: ToolContext) -> None:
    """A conflict held earlier in this review (or, for the chatting agent, this session) that was
    then settled by a saved replace is withdrawn from the inbox: what it asked was answered."""
    if (ctx.review_id is None and ctx.session_id is None) or not _settles(args):
        return
    attempt = attempt_terms(args, "memory")
    held = PendingWrite.objects.filter(
        session_id=ctx.session_id, review_id=ctx.review_id, kind="memory", status="pending", hold_kind=Hold.CONFLICT
    )
    for item in held:
        if same_attempt(attempt, attempt_terms(item.arguments, "memory")):
            item.status, item.decided_at = "rejected", timezone.now()
            item.result = "Withdrawn: the review settled the conflict itself (it replaced the old entry)."
            item.save(update_fields=["status", "decided_at", "result"])


def hold(kind: str, tool_name: str, args: dict[str, Any], ctx: ToolContext, decision: Decision) -> ToolResult:
    """Queue a write that may not be saved in the inbox (or join the item it retries)."""
    stored = secret_scan.redact_value(args) if decision.hold_kind == Hold.SECRET else args
    earlier = held_before(args, ctx, kind, decision.hold_kind)
    removal = decision.hold_kind == Hold.REMOVAL
    if earlier is not None:
        tried = json.dumps(secret_scan.redact_value(args), ensure_ascii=False)[:400]
        earlier.reason += f"\nTried again in the same review: {tried}"
        earlier.save(update_fields=["reason"])
        verb = "Not done" if removal else "Not saved"
        error = f"{verb}: it was already held for the person (#{earlier.pk}); this attempt joins it."
        return ToolResult.failure(
            error + " Do not submit it again.", changed=False, unsupported=True, pending_id=earlier.pk
        )
    pending = PendingWrite.objects.create(
        kind=kind,
        tool_name=tool_name,
        arguments=stored,
        session_id=ctx.session_id,
        review_id=ctx.review_id,
        unsupported=True,
        hold_kind=decision.hold_kind,
        reason=_with_signals(decision),
        conflict=decision.conflict or {},
    )
    if removal:
        error = f"Not done: {decision.held_reason} It was held for the person's approval in their inbox"
        error += f" (#{pending.pk}); nothing was removed. Do not submit it again."
    else:
        error = f"Not saved: {decision.held_reason} It waits in the person's inbox for them to decide."
        error += f" {decision.advice}" if decision.advice else " Do not submit it again."
    return ToolResult.failure(error, changed=False, unsupported=True, pending_id=pending.pk)


def _with_signals(decision: Decision) -> str:
    """The reason, and what the words around the quotes suggested, for the person to weigh."""
    noted = [s for s in decision.signals if s not in decision.held_reason]
    return "\n".join([decision.held_reason, *(f"Noticed: {s}" for s in noted)])
