"""The memory tool's failure budget within one turn, as Hermes has it: three failed consolidation
attempts are answered normally, the fourth is terminal ("done"), telling the model to stop retrying
and get on with its reply; a successful write starts the count again.

A policy of the agent's loop, kept here: the store only says what went wrong (WriteRefused.kind),
and the count lives in the turn's ToolContext.turn_state, which the runner resets every turn.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent.tools.results import ToolResult
from knowledge.memory.ops import TARGETS
from knowledge.memory.store import MemoryStore, WriteRefused
from knowledge.provenance import Provenance

MAX_FAILURES_PER_TURN = 3
FAILURE_KEY = "memory_failures"
# Failures that mean "the model is trying to consolidate and not getting there"; a blocked or an
# ambiguous write is a different mistake and is answered as usual however often it happens.
COUNTED = frozenset({"overflow", "no_match"})


def write(
    store: MemoryStore,
    target: str,
    operations: Sequence[Mapping[str, Any]],
    prov: Provenance,
    turn_state: dict[str, Any],
) -> ToolResult:
    """Apply the operations through the store; a refusal counts against the turn's budget."""
    try:
        result = store.write(target, operations, prov)
    except WriteRefused as refused:
        return _refused(refused, target, turn_state)
    turn_state[FAILURE_KEY] = 0
    return ToolResult.from_payload(result)


def _refused(refused: WriteRefused, target: str, turn_state: dict[str, Any]) -> ToolResult:
    if refused.kind not in COUNTED:
        return ToolResult.from_payload(refused.result)
    failures = int(turn_state.get(FAILURE_KEY, 0)) + 1
    turn_state[FAILURE_KEY] = failures
    if failures <= MAX_FAILURES_PER_TURN:
        return ToolResult.from_payload(refused.result)
    said = refused.result
    return ToolResult.failure(
        f"{TARGETS[target].label} update failed {failures} times this turn. Stop retrying memory calls: "
        "leave memory as it is and continue with your reply to the user; the fact can be saved in a later turn.",
        done=True,
        target=said.get("target", target),
        action=said.get("action", ""),
        last_error=said.get("error", ""),
        usage=said.get("usage", ""),
    )
