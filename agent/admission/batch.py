"""One verifier call per model reply (docs/EVIDENCE.md, The verifier): the memory writes and the
skill writes a review or flush asks for in one reply are read together, before any of them runs.

The loop calls `prepare` with the reply's tool calls; each write's tool then finds its reading
(agent/admission/verifier.py for memory, agent/admission/skills.py for skills). Writes the
provenance checks hold anyway are left out, so they cost no tokens.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from agent.admission import skills, verifier
from agent.llm import ToolCallRequest
from agent.tools.registry import ToolContext
from knowledge.memory.duplicates import all_entries
from knowledge.memory.store import MemoryStore


def _arguments(call: ToolCallRequest) -> dict[str, Any] | None:
    try:
        args = json.loads(call.arguments or "{}") if isinstance(call.arguments, str) else call.arguments
    except json.JSONDecodeError:
        return None  # the tool itself tells the model its arguments were not JSON
    return args if isinstance(args, dict) else None


def prepare(calls: Sequence[ToolCallRequest], ctx: ToolContext) -> None:
    """Read every memory and skill write of one model reply in one call."""
    if not verifier.enabled(ctx):
        return
    existing = all_entries(MemoryStore())
    batch: list[verifier.Proposal] = []
    for call in calls:
        args = _arguments(call) if call.name in ("memory", "skill_manage") else None
        if args is None:
            continue
        found = verifier.unread(args, ctx, existing) if call.name == "memory" else skills.unread(args, ctx)
        batch += [p for p in found if p.key not in {b.key for b in batch}]
    verifier.readings(ctx).update(verifier.read(batch, ctx))
