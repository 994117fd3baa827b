"""A session's frozen system prompt, cut back into its blocks with each block's size and budget."""

from __future__ import annotations

import re
from dataclasses import dataclass

from foundation.config import Config
from knowledge.memory.ops import RULE, TARGETS

_HEADER = re.compile(rf"^{RULE}\n(.+?) \[[^\]]*\]\n{RULE}\n", re.MULTILINE)


@dataclass(frozen=True)
class Block:
    name: str
    text: str
    budget: int | None  # characters allowed (memory files), None where no limit applies

    @property
    def chars(self) -> int:
        return len(self.text)

    @property
    def percent(self) -> int | None:
        return round(100 * self.chars / self.budget) if self.budget else None


def _budgets(config: Config) -> dict[str, tuple[str, int]]:
    """Block header -> (name, limit in characters of its entries)."""
    return {spec.header: (spec.label, config.value(f"memory.{spec.limit_key}")) for spec in TARGETS.values()}


def split(prompt: str, config: Config) -> list[Block]:
    budgets = _budgets(config)
    skills_at = prompt.find("## Skills")
    head, skills = (prompt[:skills_at], prompt[skills_at:]) if skills_at >= 0 else (prompt, "")
    matches = list(_HEADER.finditer(head))
    blocks: list[Block] = []
    identity = head[: matches[0].start()] if matches else head
    blocks.append(Block("Identity and instructions", identity.strip(), None))
    for i, match in enumerate(matches):
        end = matches[i + 1].start() if i + 1 < len(matches) else len(head)
        name, limit = budgets.get(match.group(1), (match.group(1), 0))
        # The budget is for the entries; the header lines are counted separately by the reader.
        blocks.append(Block(name, head[match.end() : end].strip(), limit or None))
    if skills:
        blocks.append(Block("Skills index", skills.strip(), None))
    return blocks
