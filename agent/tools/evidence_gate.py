"""The evidence rule for the knowledge tools (SPEC §10): who must quote what, and what happens to
a write whose quotes are not found.

- main agent: its write is answering the person in this turn, so the turn's user message is its
  evidence (a quote it gives and that is found is kept instead);
- review and flush: with `learning.evidence: required`, a write is saved only when every quote
  occurs in the messages the writer saw; otherwise it waits in the inbox marked "unsupported",
  with the reason, so nothing is lost and nothing unverified enters the prompt;
- the user (dashboard, approvals) and imports need no evidence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent.tools.registry import ToolContext
from agent.tools.results import ToolResult
from hermes_site import config as hermes_config
from knowledge.models import PendingWrite
from knowledge.provenance import Provenance
from knowledge.verification import evidence

EVIDENCE_PARAM: dict[str, Any] = {
    "type": "array",
    "items": {"type": "string"},
    "description": "Verbatim quotes from this conversation that support the write: the user's own words "
    "(for skills also tool output). Required for background saves; never infer personal facts.",
}


@dataclass(frozen=True)
class Decision:
    prov: Provenance
    held_reason: str = ""  # non-empty: do not save; hold in the inbox as unsupported


def required() -> bool:
    return hermes_config.get().get("learning", "evidence") == "required"


def decide(args: dict[str, Any], ctx: ToolContext, kind: str) -> Decision:
    raw = args.get("evidence")
    if ctx.actor == "agent":
        verdict = evidence.check(raw, ctx.seen, kind, ctx.session_id) if raw else evidence.Verdict()
        if not verdict.supported and ctx.user_text:
            verdict = evidence.of_message(ctx.message_id, ctx.user_text)
        return Decision(ctx.provenance(_pairs(verdict)))
    if ctx.actor not in ("review", "flush"):
        return Decision(ctx.provenance())
    verdict = evidence.check(raw, ctx.seen, kind, ctx.session_id)
    if verdict.supported:
        return Decision(ctx.provenance(_pairs(verdict)))
    return Decision(ctx.provenance(), verdict.reason if required() else "")


def _pairs(verdict: evidence.Verdict) -> tuple[tuple[str, int | None], ...]:
    return tuple((q.quote, q.message_id) for q in verdict.quotes)


def hold(kind: str, tool_name: str, args: dict[str, Any], ctx: ToolContext, reason: str) -> ToolResult:
    """Queue an unsupported write in the inbox; the tool result tells the model why it was not saved."""
    pending = PendingWrite.objects.create(
        kind=kind,
        tool_name=tool_name,
        arguments=args,
        session_id=ctx.session_id,
        review_id=ctx.review_id,
        unsupported=True,
        reason=reason,
    )
    return ToolResult.failure(
        f"Not saved: {reason} It waits in the user's inbox instead. Save only what the user said "
        "or clearly showed, with their exact words in 'evidence'.",
        changed=False,
        unsupported=True,
        pending_id=pending.pk,
    )
