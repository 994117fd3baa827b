"""The system prompt: identity, the frozen memory snapshot and the skills index (docs/DECISIONS.md, record 2).

Built once when a session starts and stored on the session; every turn reuses the stored text
byte for byte (so the provider's prompt cache stays valid). The only rebuild is after context
compression.
"""

from __future__ import annotations

import re

from foundation.config import Config
from knowledge.memory.store import MemoryStore
from knowledge.skills.store import SkillStore

IDENTITY = (
    "You are Hermes, a helpful assistant that learns from its conversations. "
    "You have persistent memory across sessions (the memory tool), reusable skills "
    "(skills_list, skill_view, skill_manage) and a searchable history of past sessions "
    "(session_search). Save durable facts about the user and how they like to work to memory; "
    "keep entries short and specific."
)

# The tags that fence text inside what the model reads: context recalled by memory providers
# (<memory-context>, agent/learning/providers.py) and an invoked skill's body (<skill>,
# agent/chat/slash.py). Text put inside a fence must not be able to open or close one.
FENCE_TAGS = ("memory-context", "skill")

# An opening or closing tag of a fence as a model may read it: any case, spaces around the
# slash and the name, "_" or a space for the hyphen, attributes, an escaped or full-width
# bracket, or no closing bracket at all.
_NAMES = "|".join(re.escape(tag).replace(r"\-", r"[\s_-]*") for tag in FENCE_TAGS)
_FENCE_MARKER = re.compile(
    rf"(?:<|&lt;|&#0*60;|&#x0*3c;|\uff1c)\s*(/?)\s*({_NAMES})(?![\w-])([^<>\n]*?)(>|&gt;|&#0*62;|&#x0*3e;|\uff1e|(?=[<\n])|$)",
    re.IGNORECASE,
)


def _look_alike(match: re.Match[str]) -> str:
    slash, name, rest, closer = match.groups()
    return f"‹{slash}{name}{rest}{'›' if closer else ''}"


def neutral_fences(text: str) -> str:
    """`text` with every fence tag turned into a look-alike in single guillemets (‹/memory-context›):
    the model still reads what was written, but nothing inside a fence can end it early and make
    what follows read as the person's own words."""
    return _FENCE_MARKER.sub(_look_alike, text)


def build_system_prompt(config: Config) -> str:
    parts = [IDENTITY]
    memory_blocks = MemoryStore(config).render_prompt_blocks()
    if memory_blocks:
        parts.append(memory_blocks)
    index = SkillStore(config).render_index()
    if index:
        parts.append(index)
    return "\n\n".join(parts)
