"""Pending writes (memory.write_approval / skills.write_approval): how an approved one
is applied.

The knowledge layer owns the PendingWrite record and its state machine (`PendingWrite.approve()`
/ `.reject()` in knowledge/models.py); what applying a staged tool call means belongs to the
tool that staged it, in the agent layer. So the agent registers one applier per kind at start-up
(agent/apps.py) and this module only looks them up: knowledge never imports agent.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from knowledge.provenance import Provenance

if TYPE_CHECKING:
    from knowledge.models import PendingWrite

# kind ("memory" | "skill") -> fn(pending, provenance) applying its arguments through the
# owning store; returns the tool-style JSON result ({"success": ..., "message"/"error": ...}).
Applier = Callable[["PendingWrite", Provenance], str]
_APPLIERS: dict[str, Applier] = {}


def register_applier(kind: str, fn: Applier) -> None:
    _APPLIERS[kind] = fn


def apply(pending: PendingWrite, prov: Provenance) -> str:
    applier = _APPLIERS.get(pending.kind)
    if applier is None:
        return json.dumps({"success": False, "error": f"Nothing can apply a pending write of kind {pending.kind!r}."})
    return applier(pending, prov)


def succeeded(result: str) -> bool:
    try:
        data: Any = json.loads(result)
    except json.JSONDecodeError:
        return False
    return isinstance(data, dict) and data.get("success") is True
