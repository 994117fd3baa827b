"""Memory against skills (docs/EVIDENCE.md, Memory and skills): memory holds facts, skills
hold procedures, and nothing is known twice across the two.

- A memory entry that restates a skill (nearly repeats its description, or is a procedure whose
  words the skill's steps already hold) is refused naming the skill.
- A review or flush that saves a procedure (numbered steps, "first … then …") as memory is told it
  belongs in a skill.
- The other way round, a new skill that restates a memory entry (the same procedure saved as memory
  earlier) is saved, since a procedure belongs in a skill, and the memory entry is offered for
  removal in the inbox (`offer_removal`): the person decides, and nothing they had goes unasked.

All are lexical (knowledge/verification/similarity.py terms), so they need no model call; with the
verifier on, its duplicate-of answer for a skill leads to the same offer (agent/tools/verify_skills.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from agent.tools.registry import ToolContext
from foundation import config as hermes_config
from knowledge.models import PendingWrite
from knowledge.skills.format import SkillError, parse_skill_md
from knowledge.skills.store import SkillStore
from knowledge.verification.similarity import identifiers, near_duplicate, said_words, terms

# Share of a procedure's terms a skill's text must hold for the entry to restate it.
STEPS_COVERED = 0.6
# A procedure: at least this many steps (numbered or bulleted items, or sequence words).
MIN_STEPS = 2
_ITEM = re.compile(r"(?:^|\s)(?:\d{1,2}[.)]\s|step \d+\b|[-*•]\s)", re.IGNORECASE | re.MULTILINE)
_SEQUENCE = re.compile(
    r"\b(?:first|then|next|after that|afterwards|finally)\b|->|→|先|然后|接着|最后|第[一二三四五]步", re.IGNORECASE
)


def is_procedure(text: str) -> bool:
    return len(_ITEM.findall(text)) >= MIN_STEPS or len(_SEQUENCE.findall(text)) >= MIN_STEPS


def _body(path: Any) -> str:
    try:
        return str((path / "SKILL.md").read_text(encoding="utf-8"))
    except OSError:
        return ""


def _covered(entry: str, text: str) -> bool:
    wanted = terms(entry)
    if not wanted or any(i not in said_words(text) for i in identifiers(entry)):
        return False
    return len(wanted & terms(text)) / len(wanted) >= STEPS_COVERED


def restates(entry: str, description: str, steps: str) -> bool:
    """Whether a memory entry and a skill (its description and steps) say the same thing."""
    if description and near_duplicate(entry, description):
        return True
    return is_procedure(entry) and _covered(entry, f"{description}\n{steps}")


def restated_skill(entry: str) -> str | None:
    """The name of the skill `entry` restates, if any."""
    for info in SkillStore(hermes_config.get()).list():
        if restates(entry, info.description, _body(info.path)):
            return info.name
    return None


def restated_entry(skill_md: str, existing: Sequence[tuple[str, str]]) -> tuple[str, str] | None:
    """The memory entry, as (file, text), that a new skill's SKILL.md restates, if any."""
    try:
        parsed = parse_skill_md(skill_md, lenient=True)
    except SkillError:
        return None  # the store's own validation reports the format problem
    return next(((w, e) for w, e in existing if restates(e, parsed.description, parsed.body)), None)


def offer_removal(where: str, entry: str, skill: str, ctx: ToolContext) -> PendingWrite:
    """Hold, for the person's approval, the removal of the memory entry a new skill now holds
    (one item per entry: a second skill restating it finds the first offer)."""
    args = {"target": where, "action": "remove", "old_text": entry}
    waiting = PendingWrite.objects.filter(kind="memory", status="pending", hold_kind=PendingWrite.Hold.REMOVAL)
    found = next((p for p in waiting if p.arguments == args), None)
    if found is not None:
        return found
    return PendingWrite.objects.create(
        kind="memory",
        tool_name="memory",
        arguments=args,
        session_id=ctx.session_id,
        review_id=ctx.review_id,
        unsupported=True,
        hold_kind=PendingWrite.Hold.REMOVAL,
        reason=(
            f"The new skill '{skill}' holds this procedure now, so it is known twice. Approve to "
            "remove the entry from memory (the skill keeps it), or reject to keep both."
        ),
    )


def refusal(operations: Sequence[Mapping[str, Any]], actor: str) -> str | None:
    """Why a memory write is refused for what belongs to skills, or None."""
    for op in operations:
        content = op.get("content")
        if op.get("action") not in ("add", "replace") or not isinstance(content, str) or not content.strip():
            continue
        name = restated_skill(content)
        if name is not None:
            return (
                f"Not saved: this restates the skill '{name}', which already holds it. Memory keeps facts; "
                f"patch '{name}' with skill_manage if something in it changed."
            )
        if actor in ("review", "flush") and is_procedure(content):
            return (
                "Not saved: this is a procedure (steps to follow), and procedures belong in a skill, not in "
                "memory. Create or patch a skill with skill_manage instead; memory keeps facts about the person "
                "and the environment."
            )
    return None
