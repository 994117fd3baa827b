"""Near duplicates among skills: a new skill that repeats an existing one by name or description
is refused with the name of the skill to patch instead; the curator proposes merging two that
overlap."""

from __future__ import annotations

from knowledge.skills.format import SkillError, parse_skill_md
from knowledge.skills.store import SkillStore
from knowledge.verification.similarity import THRESHOLD, near_duplicate, similarity


def _name_words(name: str) -> str:
    return name.replace("-", " ").replace("_", " ").replace(".", " ")


def overlap(name: str, description: str, other_name: str, other_description: str) -> str:
    """Why two skills overlap ("similar names", "similar descriptions"), or "" when they do not;
    the new-skill check and the curator's merge proposals (knowledge/skills/curator.py) share it."""
    reasons = []
    if similarity(_name_words(name), _name_words(other_name)) >= THRESHOLD:
        reasons.append("similar names")
    if description and other_description and near_duplicate(description, other_description):
        reasons.append("similar descriptions")
    return " and ".join(reasons)


def skill_duplicate(store: SkillStore, name: str, content: str) -> str | None:
    """An error naming the existing skill a new one nearly repeats (by name or description)."""
    try:
        description = parse_skill_md(content).description
    except SkillError:
        return None  # the store's own validation reports the format problem
    for info in store.list():
        if info.name == name:
            continue  # the store refuses the same name itself
        if overlap(name, description, info.name, info.description):
            return (
                f"Not created: skill '{info.name}' already covers this ({info.description[:160]!r}). "
                f"Patch or edit '{info.name}' with what you learned instead of creating a near duplicate."
            )
    return None
