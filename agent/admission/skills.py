"""The verifier's reading of learned skills (docs/EVIDENCE.md, The verifier).

A review's or flush's skill create, edit or patch that passed the deterministic checks (its quotes
are real and show its steps ran: agent/admission/provenance.py) is read once more by the review
model, in the same call as the memory writes of that reply (agent/admission/batch.py). It is
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
from typing import Any

from agent.admission import nearest, provenance, verifier
from agent.admission.provenance import Decision
from agent.admission.verifier import NEAREST, SKILL_CHARS, SKILL_FILE, Proposal, Reading
from agent.tools.registry import ToolContext
from knowledge.memory.duplicates import all_entries
from knowledge.memory.store import MemoryStore
from knowledge.models import PendingWrite

Hold = PendingWrite.Hold

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
    near = sorted(others, key=lambda c: -nearest.held_share(c[1], text))[:NEAREST]
    return tuple(([replaced] if replaced else []) + near)


def proposal(args: dict[str, Any], ctx: ToolContext) -> Proposal | None:
    """The skill write as the verifier is asked about it, or None for actions it does not read."""
    action, name = args.get("action"), str(args.get("name") or "")
    if action not in READ_ACTIONS or not name:
        return None
    skills = verifier.skill_texts()
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
        evidence=verifier.quoted(args, ctx, "skill"),
        nearest=_nearest(text, skills + list(all_entries(MemoryStore())), replaced),
        kind="skill",
    )


def unread(args: dict[str, Any], ctx: ToolContext) -> list[Proposal]:
    """The skill write of one call, if it still needs reading (the deterministic checks do not hold
    it anyway, and it was not read before)."""
    if args.get("action") not in READ_ACTIONS or provenance.decide(args, ctx, "skill").held_reason:
        return []
    found = proposal(args, ctx)
    return [found] if found is not None and found.key not in verifier.readings(ctx) else []


def _named(ref: tuple[str, str]) -> str:
    where, text = ref
    return f"the skill '{where[len(SKILL_FILE) :]}'" if where.startswith(SKILL_FILE) else f"the {where} entry {text!r}"


def _holds(decision: Decision, p: Proposal, r: Reading) -> Decision | None:
    """The hold a reading calls for, or None when the skill may be saved."""
    said = f": {r.reason}" if r.reason else "."
    if r.verdict in ("failed", "unreachable"):
        # A skill runs steps: with no second reading it is not saved, whatever the fallback says.
        return verifier.unchecked(decision, r)
    if r.instructs:
        why = "It tells the assistant to do more than the task it is for (override its rules, reveal or send data)"
        return decision.holding(why + said, Hold.INSTRUCTION)
    if r.verdict != "supported":
        how = "does not show" if r.verdict == "unsupported" else "may not show"
        return decision.holding(
            f"On a second reading, the conversation {how} these steps ran and worked{said}", Hold.UNTESTED
        )
    mine = (SKILL_FILE + p.target, p.replaces)
    if r.conflicts_with is not None and r.conflicts_with != mine:
        why = f"It says to do what {_named(r.conflicts_with)} says another way{said}"
        return decision.holding(why, Hold.CONFLICT, advice="Patch the one that is wrong instead.")
    if r.duplicate_of is not None and r.duplicate_of[0].startswith(SKILL_FILE) and r.duplicate_of != mine:
        why = f"It holds the same procedure as {_named(r.duplicate_of)}, already saved{said}"
        return decision.holding(why, Hold.DUPLICATE, advice="Patch that skill with what you learned instead.")
    return None


def second_reading(
    args: dict[str, Any], ctx: ToolContext, decision: Decision
) -> tuple[Decision, tuple[str, str] | None]:
    """`decision`, or the hold the verifier asks for; and the memory entry (file, text) it found the
    skill repeats, to be offered for removal once the skill is saved."""
    if decision.held_reason or not verifier.enabled(ctx):
        return decision, None
    p = proposal(args, ctx)
    if p is None:
        return decision, None
    if p.key not in verifier.readings(ctx):
        verifier.readings(ctx).update(verifier.read([p], ctx))
    reading = verifier.readings(ctx)[p.key]
    held = _holds(decision, p, reading)
    if held is not None:
        return held, None
    dup = reading.duplicate_of
    return decision, (dup if dup is not None and not dup[0].startswith(SKILL_FILE) else None)
