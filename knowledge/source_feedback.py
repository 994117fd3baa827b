"""What the person said about one source of an answer ("Not relevant" / "Wrong" under Sources,
agent/chat/sources.py): an inbox item (`PendingWrite`) for them to decide, and what approving it does.

A memory entry's item is an ordinary memory removal (kind "memory"), applied through the memory
store like any other, with its change log and undo. The other sources are items of kind `KIND`,
applied here: a skill is flagged "needs review" (a bad outcome the person gave, which the next
skill review is handed), a recalled chat is no longer recalled (the approved item itself is the
record `not_recalled()` reads), and a mem0 memory or a tool call is recorded as the person's word
only: approving it changes nothing else.
"""

from __future__ import annotations

import json

from knowledge.models import ChatSession, PendingWrite, SkillOutcome
from knowledge.provenance import Provenance

KIND = "source"
VERDICTS = {"not_relevant": "Not relevant", "wrong": "Wrong"}
# What approving an item of KIND does, by its "action" argument.
FLAG_SKILL, NO_RECALL, NOTE = "flag_skill", "no_recall", "note"
PERSON = "person"  # SkillOutcome.via of a skill the person flagged (knowledge/skills/outcomes.py)


def _reason(verdict: str, answer_id: int, what: str) -> str:
    return f"You marked {what} '{VERDICTS[verdict]}' under answer #{answer_id}."


def memory_removal(session: ChatSession, answer_id: int, verdict: str, target: str, entry: str) -> PendingWrite:
    """An inbox item removing `entry` from memory file `target` when approved."""
    return PendingWrite.objects.create(
        kind="memory",
        tool_name="memory",
        arguments={"action": "remove", "target": target, "old_text": entry},
        session=session,
        unsupported=True,  # shown with its hold's badge: nothing is removed until it is approved
        hold_kind=PendingWrite.Hold.REMOVAL,
        reason=_reason(verdict, answer_id, "this memory entry") + " Approving removes it (undo on the Changes page).",
    )


def source_item(
    session: ChatSession, answer_id: int, verdict: str, action: str, subject: str, detail: dict[str, str]
) -> PendingWrite:
    """An inbox item of KIND: flag skill `subject`, stop recalling chat `subject`, or a note."""
    what = {FLAG_SKILL: "this skill", NO_RECALL: "this recalled chat", NOTE: "this source"}[action]
    return PendingWrite.objects.create(
        kind=KIND,
        tool_name="sources",
        arguments={"action": action, "subject": subject, "verdict": verdict, "answer_id": answer_id, **detail},
        session=session,
        reason=_reason(verdict, answer_id, what),
    )


def not_recalled() -> set[str]:
    """The chats the person said should not be recalled again (approved items of KIND)."""
    rows = PendingWrite.objects.filter(kind=KIND, status="approved").values_list("arguments", flat=True)
    return {str(a.get("subject")) for a in rows if isinstance(a, dict) and a.get("action") == NO_RECALL}


def apply_pending(pending: PendingWrite, prov: Provenance) -> str:
    """Apply an approved item of KIND (registered with knowledge/approvals.py); the tool-style result."""
    args = pending.arguments if isinstance(pending.arguments, dict) else {}
    action, subject = args.get("action"), str(args.get("subject") or "")
    if action == FLAG_SKILL and subject:
        SkillOutcome.objects.create(
            name=subject,
            session_id=pending.session_id,
            via=PERSON,
            answer_message_id=args.get("answer_id"),
            outcome="bad",
            detail=f"The person marked the skill '{VERDICTS.get(str(args.get('verdict')), 'Wrong')}' for an answer.",
        )
        return json.dumps({"success": True, "message": f"Skill '{subject}' flagged: needs review"})
    if action == NO_RECALL and subject:
        return json.dumps({"success": True, "message": "This chat is not recalled into other chats any more"})
    if action == NOTE:
        return json.dumps({"success": True, "message": "Your word on this source is recorded; nothing else changed"})
    return json.dumps({"success": False, "error": f"Unknown source item {action!r}"})
