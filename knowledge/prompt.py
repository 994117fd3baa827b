"""The system prompt: identity, the frozen memory snapshot and the skills index (docs/DECISIONS.md, record 2).

Built once when a session starts and stored on the session; every turn reuses the stored text
byte for byte (so the provider's prompt cache stays valid). The only rebuild is after context
compression.
"""

from __future__ import annotations

from hermes_site.config import Config
from knowledge.memory.store import MemoryStore
from knowledge.skills.store import SkillStore

IDENTITY = (
    "You are Hermes, a helpful assistant that learns from its conversations. "
    "You have persistent memory across sessions (the memory tool), reusable skills "
    "(skills_list, skill_view, skill_manage) and a searchable history of past sessions "
    "(session_search). Save durable facts about the user and how they like to work to memory; "
    "keep entries short and specific."
)


def build_system_prompt(config: Config) -> str:
    parts = [IDENTITY]
    memory_blocks = MemoryStore(config).render_prompt_blocks()
    if memory_blocks:
        parts.append(memory_blocks)
    index = SkillStore(config).render_index()
    if index:
        parts.append(index)
    return "\n\n".join(parts)
