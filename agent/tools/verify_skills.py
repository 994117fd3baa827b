"""The verifier's reading of learned skills (docs/EVIDENCE.md, The verifier).

A review's or flush's skill create, edit or patch that passed the deterministic checks (its quotes
are real and show its steps ran: agent/tools/evidence_gate.py) is read once more by the review
model, in the same call as the memory writes of that reply (agent/tools/verify_batch.py). It is
sent the skill's name and SKILL.md (or the patch, with the skill it changes), the quotes with their
whole messages, and the existing skills and memory entries nearest to it. Only "supported" saves:

- not supported (or unsure): held as Untested, the steps not shown to have run and worked;
- an instruction beyond the skill's task (override the rules, send data): held as Instruction;
- the same procedure as another skill: held as Duplicate, naming the skill to patch instead;
- the same procedure as a memory entry: saved, and the entry offered for removal
  (agent/tools/memory_skills.py, `offer_removal`), since a procedure belongs in a skill;
- another way of doing what a skill or entry says: held as Conflict, naming it;
- a call that fails or an answer without a verdict: held, never saved unverified.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from agent.tools import evidence_gate, verify_gate
from agent.tools.registry import ToolContext
from agent.tools.verify_gate import NEAREST, SKILL_CHARS, SKILL_FILE, Proposal, Reading
from knowledge.memory.duplicates import all_entries
from knowledge.memory.store import MemoryStore

# The actions that say something was learned (the others are removals or enable: not read).
READ_ACTIONS = ("create", "edit", "patch")


def _proposed_text(args: dict[str, Any]) -> str:
    if args.get("action") == "patch":
        where = args.get("file_path") or "SKILL.md"
        return f"In {where}, replace:\n{args.get('old_string')}\nwith:\n{args.get('new_string')}"[:SKILL_CHARS]
    return str(args.get("content") or "")[:SKILL_CHARS]


Pair = tuple[str, str]  # (file, text): a memory file, or SKILL_FILE + a skill's name


def _nearest(text: str, candidates: list[Pair], replaced: Pair | None) -> tuple[Pair, ...]:
    others = [c for c in candidates if c != replaced]
    near = sorted(others, key=lambda c: -verify_gate.held_share(c[1], text))[:NEAREST]
    return tuple(([replaced] if replaced else []) + near)


def proposal(args: dict[str, Any], ctx: ToolContext) -> Proposal | None:
    """The skill write as the verifier is asked about it, or None for actions it does not read."""
    action, name = args.get("action"), str(args.get("name") or "")
    if action not in READ_ACTIONS or not name:
        return None
    skills = verify_gate.skill_texts()
    replaced = next((c for c in skills if c[0] == SKILL_FILE + name), None) if action != "create" else None
    text = _proposed_text(args)
    fields = ("content", "old_string", "new_string", "file_path")
    return Proposal(
        key=json.dumps(["skill", action, name, *(args.get(k) for k in fields)], ensure_ascii=False),
        target=name,
        action=str(action),
        content=text,
        replaces=replaced[1] if replaced else "",
        both_hold=False,
        evidence=verify_gate.quoted(args, ctx, "skill"),
        nearest=_nearest(text, skills + list(all_entries(MemoryStore())), replaced),
        kind="skill",
    )


def unread(args: dict[str, Any], ctx: ToolContext) -> list[Proposal]:
    """The skill write of one call, if it still needs reading (the deterministic checks do not hold
    it anyway, and it was not read before)."""
    if args.get("action") not in READ_ACTIONS or evidence_gate.decide(args, ctx, "skill").held_reason:
        return []
    found = proposal(args, ctx)
    return [found] if found is not None and found.key not in verify_gate.readings(ctx) else []


def _named(ref: tuple[str, str]) -> str:
    where, text = ref
    return f"the skill '{where[len(SKILL_FILE) :]}'" if where.startswith(SKILL_FILE) else f"the {where} entry {text!r}"


def _holds(decision: evidence_gate.Decision, p: Proposal, r: Reading) -> evidence_gate.Decision | None:
    """The hold a reading calls for, or None when the skill may be saved."""
    said = f": {r.reason}" if r.reason else "."
    if r.verdict == "failed":
        why = f"{evidence_gate.UNSUPPORTED}: it could not be checked a second time ({r.reason}), "
        return replace(decision, held_reason=why + "so it was not saved unchecked.")
    if r.instructs:
        why = f"{verify_gate.INSTRUCTION}: it tells the assistant to do more than the task it is for"
        return replace(decision, held_reason=f"{why} (override its rules, reveal or send data){said}")
    if r.verdict != "supported":
        how = "does not show" if r.verdict == "unsupported" else "may not show"
        why = f"{evidence_gate.UNTESTED}: on a second reading, the conversation {how} these steps ran and worked"
        return replace(decision, held_reason=why + said)
    mine = (SKILL_FILE + p.target, p.replaces)
    if r.conflicts_with is not None and r.conflicts_with != mine:
        why = f"{evidence_gate.CONFLICT}: it says to do what {_named(r.conflicts_with)} says another way{said}"
        return replace(decision, held_reason=why, advice="Patch the one that is wrong instead.")
    if r.duplicate_of is not None and r.duplicate_of[0].startswith(SKILL_FILE) and r.duplicate_of != mine:
        why = f"{verify_gate.DUPLICATE}: it holds the same procedure as {_named(r.duplicate_of)}, already saved"
        return replace(decision, held_reason=why + said, advice="Patch that skill with what you learned instead.")
    return None


def second_reading(
    args: dict[str, Any], ctx: ToolContext, decision: evidence_gate.Decision
) -> tuple[evidence_gate.Decision, tuple[str, str] | None]:
    """`decision`, or the hold the verifier asks for; and the memory entry (file, text) it found the
    skill repeats, to be offered for removal once the skill is saved."""
    if decision.held_reason or not verify_gate.enabled(ctx):
        return decision, None
    p = proposal(args, ctx)
    if p is None:
        return decision, None
    if p.key not in verify_gate.readings(ctx):
        verify_gate.readings(ctx).update(verify_gate.read([p], ctx))
    reading = verify_gate.readings(ctx)[p.key]
    held = _holds(decision, p, reading)
    if held is not None:
        return held, None
    dup = reading.duplicate_of
    return decision, (dup if dup is not None and not dup[0].startswith(SKILL_FILE) else None)
