"""A valid SKILL.md for the skill-store tests."""

from __future__ import annotations


def skill_md(
    name: str, description: str = "Does the thing", body: str = "# Steps\n1. Do it.\n", extra: str = ""
) -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\n\n{body}"
