"""What code can know about a learned write: where its words come from (docs/EVIDENCE.md).

The first stage of admission. It holds a write only for what code can establish; what the words
mean is the verifier's (agent/admission/verifier.py), with the signals of agent/admission/signals.py
beside it. With `learning.evidence: required`, a review's or flush's write is held when:

- it holds a secret (an API key, a password in prose): never saved, whoever writes it, and shown
  redacted in the inbox;
- a quote is not in a stored message the person typed (for skills also tool output), is found only
  in something they pasted (a document, an attachment's text), in the model's copy of the
  conversation (an expanded /skill, a compression summary) or in the assistant's text;
- a quote only acknowledges ("ok, thanks");
- a skill's quotes share nothing with it, or do not show its steps ran and worked (tool output of
  them succeeding, or the person saying so in their own words);
- it removes what the person had without their asking (agent/admission/holds.py for the inbox).

With the verifier off or unreachable, the lexical fallback (a cue signal: negation, question,
conditional, someone else, a joke) holds too, and an entry on the subject of an existing one that
says something else is held as a conflict (with the verifier on, it judges both).

The chatting agent's writes rest on the person's current message: secrets are held, removals in a
turn that carries a document or attachment wait for the person, and the fallback's cues hold a
memory entry the message negates or asks about. The person (dashboard, approvals) and imports need
no evidence.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from agent.admission import signals
from agent.tools.registry import ToolContext
from foundation import config as hermes_config
from knowledge import versions
from knowledge.attachments import MessageAttachment
from knowledge.models import Message, PendingWrite
from knowledge.provenance import Provenance
from knowledge.verification import conflicts, evidence, removal
from knowledge.verification import secrets as secret_scan
from knowledge.verification.documents import Located, statement_text
from knowledge.verification.lexicon import content_terms
from knowledge.verification.sentences import sentences

Hold = PendingWrite.Hold

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

CONFLICT_ADVICE = (
    "Replace the old entry (action 'replace', old_text from it) if the new one is right, or, if both hold, add "
    "it again with both_hold: true."
)


@dataclass(frozen=True)
class Decision:
    prov: Provenance
    held_reason: str = ""  # non-empty: do not save; hold in the inbox with this reason
    hold_kind: str = Hold.UNSUPPORTED
    advice: str = ""  # what the tool result tells the model to do about the hold
    conflict: dict[str, str] | None = None  # a conflict hold: the existing entry {"target", "text"}
    # What the words around the quotes suggest (agent/admission/signals.py), for the verifier and the inbox.
    signals: tuple[str, ...] = field(default=())

    def holding(self, reason: str, kind: str = Hold.UNSUPPORTED, **extra: Any) -> Decision:
        return Decision(self.prov, reason, kind, signals=self.signals, **extra)


# Two memory writes are the same attempt when their content terms overlap this much (Jaccard index).
SAME_ATTEMPT = 0.5


def attempt_terms(args: Any, kind: str) -> tuple[str, set[str]]:
    """What identifies an attempt: a skill's name, or a memory write's content terms."""
    args = args if isinstance(args, dict) else {}
    if kind == "skill":
        return str(args.get("name") or ""), set()
    return "", content_terms(" ".join(entries(args)), framing=False)


def same_attempt(a: tuple[str, set[str]], b: tuple[str, set[str]]) -> bool:
    if a[0] or b[0]:
        return a[0] == b[0]
    shared = a[1] & b[1]
    return bool(shared) and len(shared) / len(a[1] | b[1]) >= SAME_ATTEMPT


def _removal_key(args: Any) -> tuple[str, ...]:
    args = args if isinstance(args, dict) else {}
    ops = [(str(op.get("action")), str(op.get("old_text"))) for op in memory_ops(args)]
    return (str(args.get("action")), str(args.get("name")), str(args.get("file_path")), *map(str, ops))


def held_before(args: dict[str, Any], ctx: ToolContext, kind: str, hold_kind: str) -> PendingWrite | None:
    """An item held earlier in this review that `args` tries again: a removal the same removal, any
    other write one with the same subject (a retried conflict, a write with other quotes)."""
    if ctx.review_id is None:
        return None
    held = PendingWrite.objects.filter(review_id=ctx.review_id, kind=kind, unsupported=True, status="pending")
    if hold_kind == Hold.REMOVAL:
        key = _removal_key(args)
        return next(
            (i for i in held.filter(hold_kind=Hold.REMOVAL).order_by("id") if _removal_key(i.arguments) == key), None
        )
    attempt = attempt_terms(args, kind)
    others = held.exclude(hold_kind=Hold.REMOVAL).order_by("id")
    return next((item for item in others if same_attempt(attempt, attempt_terms(item.arguments, kind))), None)


def required() -> bool:
    return hermes_config.get().learning.evidence == "required"


def verifying(ctx: ToolContext) -> bool:
    """Whether the verifier reads this write (a review's or flush's, with it configured)."""
    config = hermes_config.get()
    return (
        ctx.actor in ("review", "flush")
        and config.learning.evidence == "required"
        and config.learning.verify == "model"
    )


def _pairs(verdict: evidence.Verdict) -> tuple[tuple[str, int | None], ...]:
    return tuple((q.quote, q.message_id) for q in verdict.quotes)


def memory_ops(args: dict[str, Any]) -> list[dict[str, Any]]:
    ops = args.get("operations") if isinstance(args.get("operations"), list) else [args]
    return [op for op in ops or [] if isinstance(op, dict)]


def entries(args: dict[str, Any]) -> list[str]:
    return [str(op["content"]) for op in memory_ops(args) if isinstance(op.get("content"), str) and op["content"]]


def _skill_text(args: dict[str, Any]) -> str:
    return " ".join(str(args.get(k) or "") for k in ("content", "new_string", "file_content"))


def written_text(args: dict[str, Any], kind: str) -> str:
    return "\n".join(entries(args)) if kind == "memory" else _skill_text(args)


def secret_reason(args: dict[str, Any], kind: str) -> str:
    """Why a write may never be saved because it holds a secret, or "": a secret the entry holds, or a
    value the quotes name as one ("the password is …") that the entry repeats in other words."""
    written = written_text(args, kind)
    found = secret_scan.find(written)
    quotes = args.get("evidence")
    for quote in [quotes] if isinstance(quotes, str) else quotes if isinstance(quotes, list) else []:
        if found is None and isinstance(quote, str):
            found = next((f for f in secret_scan.find_all(quote) if quote[f.start : f.end] in written), None)
    if found is None:
        return ""
    return f"It contains {found.what}. Secrets are never saved to memory or skills; the value is hidden here."


def decide(args: dict[str, Any], ctx: ToolContext, kind: str, existing: Sequence[tuple[str, str]] = ()) -> Decision:
    if ctx.actor == "user":
        return Decision(ctx.provenance())
    secret = secret_reason(args, kind)
    if secret:
        return Decision(ctx.provenance(), secret, Hold.SECRET)
    if ctx.actor == "agent":
        return _decide_agent(args, ctx, kind, existing)
    if ctx.actor not in ("review", "flush"):
        return Decision(ctx.provenance())
    verdict = evidence.check(args.get("evidence"), ctx.seen, kind, ctx.session_id)
    if not required():
        return Decision(ctx.provenance(_pairs(verdict) if verdict.supported else ()))
    decision = Decision(ctx.provenance(_pairs(verdict)))
    earlier = held_before(args, ctx, kind, Hold.UNSUPPORTED)
    replaces = any(op.get("action") == "replace" for op in memory_ops(args))
    if earlier is not None and not (earlier.hold_kind == Hold.CONFLICT and replaces):  # a replace settles it
        return decision.holding(f"It was tried again after it was held (it joins #{earlier.pk}).", earlier.hold_kind)
    reason = verdict.reason or _unlinked(verdict) or signals.acknowledgement(verdict.located)
    if reason:
        return decision.holding(reason)
    if kind == "skill":
        return _skill_decision(args, verdict.located, decision)
    found = [sig for e in entries(args) for sig in signals.read(e, verdict.located)]
    decision = Decision(decision.prov, signals=tuple(sig.sentence for sig in found))
    if verifying(ctx):
        return decision  # the verifier judges meaning and conflicts, with the signals beside the write
    fallback = signals.fallback_reason(found)
    if fallback:
        return decision.holding(fallback)
    return fallback_conflict(args, existing, decision) or decision


def _unlinked(verdict: evidence.Verdict) -> str:
    missing = [q.quote for q in verdict.quotes if q.message_id is None]
    if missing:
        return f"The quote {missing[0][:120]!r} could not be linked to a stored message of this conversation."
    return ""


def _skill_decision(args: dict[str, Any], located: Sequence[Located], decision: Decision) -> Decision:
    """A skill's quotes must be about the skill, and show that its steps ran and worked."""
    if signals.shares_nothing(_skill_text(args), located):
        return decision.holding("The quotes share nothing with the skill.")
    if not signals.proves_it_ran(located):
        return decision.holding(
            "Nothing in the conversation shows these steps ran and worked (no tool output of them succeeding, "
            "and the person did not say it worked in their own words).",
            Hold.UNTESTED,
        )
    return decision


def fallback_conflict(args: dict[str, Any], existing: Sequence[tuple[str, str]], decision: Decision) -> Decision | None:
    """Without the verifier, an add on the subject of an existing entry that says something else
    waits for the person, "both hold" included: only a model can tell that two entries that differ
    in a name (works at Acme / works at Globex) are both true."""
    replaced = [str(op.get("old_text")) for op in memory_ops(args) if op.get("action") in ("replace", "remove")]
    standing = [(w, e) for w, e in existing if not any(old and old in e for old in replaced)]
    for op in memory_ops(args):
        if op.get("action") != "add" or not isinstance(op.get("content"), str):
            continue
        found = conflicts.find(op["content"], standing)
        if found is None:
            continue
        reason = f"It is about the same thing as the {found.where} entry {found.text!r} and says something else."
        if found.values_only:
            advice = "They differ only in a value, so both cannot hold: replace the old entry if the new one is right."
        elif args.get("both_hold") is True:
            reason += " Whether both hold is yours to say: the second reading is off."
            advice = "It waits for the person; do not submit it again."
        else:
            advice = CONFLICT_ADVICE
        return decision.holding(
            reason, Hold.CONFLICT, advice=advice, conflict={"target": found.where, "text": found.text}
        )
    return None


def decide_removal(args: dict[str, Any], ctx: ToolContext, kind: str, subject: str) -> Decision:
    """A review's or flush's removal (skill delete, disable, remove_file; memory remove) goes ahead
    only when the person asked for it in the conversation (knowledge/verification/removal.py); a
    chatting agent's only when the turn's message carries no document or attachment (a pasted page
    may ask for it). Otherwise it waits for the person's approval, whatever `learning.evidence`
    says: the rule protects what the person already has."""
    what = "this removal" if kind == "memory" else f"this {args.get('action')}"
    if ctx.actor == "agent":
        carried = _carried(ctx)
        if carried:
            return Decision(
                ctx.provenance(),
                f"Your message carried {carried}, which may have asked for {what}: it waits for you to confirm it.",
                Hold.REMOVAL,
            )
        return Decision(ctx.provenance())
    if ctx.actor not in ("review", "flush"):
        return Decision(ctx.provenance())
    if held_before(args, ctx, kind, Hold.REMOVAL) is not None:  # other quotes do not release a held removal
        return Decision(ctx.provenance(), f"It was tried again after {what} was held.", Hold.REMOVAL)
    verdict = evidence.check(args.get("evidence"), ctx.seen, "memory", ctx.session_id)
    reason = verdict.reason or _unlinked(verdict) or removal.check(subject, verdict.located)
    if not reason:
        return Decision(ctx.provenance(_pairs(verdict)))
    return Decision(ctx.provenance(), f"The person did not ask for {what} in the conversation. {reason}", Hold.REMOVAL)


def _carried(ctx: ToolContext) -> str:
    """What the turn's message carried besides the person's own words: "a document", "an attachment"."""
    if ctx.message_id is not None and MessageAttachment.objects.filter(message_id=ctx.message_id).exists():
        return "an attachment"
    text = ctx.user_text
    if text.strip() and statement_text(text).split() != text.split():
        return "a document"
    return ""


def _decide_agent(args: dict[str, Any], ctx: ToolContext, kind: str, existing: Sequence[tuple[str, str]]) -> Decision:
    raw = args.get("evidence")
    verdict = evidence.Verdict()
    if raw:
        verdict = evidence.check(raw, ctx.seen, kind, ctx.session_id, since_id=ctx.message_id)
    if not verdict.supported and ctx.user_text:
        verdict = evidence.of_message(ctx.message_id, ctx.user_text)
    decision = Decision(ctx.provenance(_pairs(verdict)))
    if kind != "memory" or not required() or not ctx.user_text.strip():
        return decision  # skills and turns without a message of the person's are not checked
    for entry in entries(args):
        found = signals.read(entry, _turn_quotes(entry, ctx.user_text))
        cue = signals.fallback_reason(found)
        if cue and not (args.get("target") == "memory" and _shown_by_tools(ctx)):
            return decision.holding(cue)
    # The verifier does not read the chatting agent's writes: a conflict waits for the person.
    return fallback_conflict(args, existing, decision) or decision


def _turn_quotes(entry: str, user_text: str) -> list[Located]:
    """The sentences of the person's current message that are about the entry, as its quotes."""
    said = statement_text(user_text)
    wanted = content_terms(entry, framing=False)
    about = [s for s in sentences(said) if content_terms(s) & wanted]
    return [Located(s, said) for s in about] or [Located(said.strip() or user_text, said)]


def _shown_by_tools(ctx: ToolContext) -> bool:
    """The agent's own note may rest on this turn's tool output instead of the person's words."""
    if not ctx.session_id or ctx.message_id is None:
        return False
    outputs = Message.objects.filter(session_id=ctx.session_id, role="tool", id__gt=ctx.message_id)
    outputs = outputs.exclude(id__in=versions.off_path_of(ctx.session_id))  # not an earlier answer's tools
    return outputs.exists()
