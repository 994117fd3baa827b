"""The `memory` tool (docs/BEHAVIOUR.md, Memory): the model's way to write MEMORY.md and USER.md.

All the rules live in `knowledge.memory.store.MemoryStore`; this module only validates the
model's arguments, refuses disabled targets, stages review writes when write approval is on,
and turns the store's result dicts into tool results.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent.admission import holds, provenance, verifier
from agent.tools import memory_budget, memory_skills
from agent.tools.registry import Tool, ToolContext
from agent.tools.results import ToolResult
from knowledge import private_chats
from knowledge.memory.duplicates import all_entries, memory_duplicate
from knowledge.memory.store import TARGETS, MemoryStore, OpError, parse_operations
from knowledge.models import PendingWrite
from knowledge.provenance import Provenance

TOOL_NAME = "memory"

DESCRIPTION = (
    "Save durable facts to your persistent memory, which is shown to you at the start of every future "
    "session. target 'user' is the user profile: who the user is, their preferences, communication style "
    "and habits. target 'memory' is your own notes: environment facts, project conventions, tool quirks, "
    "lessons learned. Save what will still matter next week; skip temporary task state. "
    "Actions: 'add' (content = one self-contained entry), 'replace' (old_text = a short substring that "
    "identifies one entry, content = its new full text), 'remove' (old_text identifies the entry). "
    "Use 'operations' to apply several actions at once, atomically. Memory has a character limit: when "
    "it is full, consolidate (merge or shorten entries with replace, drop stale ones with remove). "
    "Writes are saved immediately but appear in the system prompt only from the next session."
)

_OPERATION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
        "content": {"type": "string", "description": "New entry text (add, replace)."},
        "old_text": {"type": "string", "description": "Short unique substring of the entry (replace, remove)."},
    },
    "required": ["action"],
}

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "target": {
            "type": "string",
            "enum": ["memory", "user"],
            "description": "'memory' for your notes (the default), 'user' for the user profile.",
        },
        "action": {"type": "string", "enum": ["add", "replace", "remove"]},
        "content": {"type": "string", "description": "The entry's text, for add and replace."},
        "old_text": {
            "type": "string",
            "description": "A short substring that identifies exactly one existing entry, for replace and remove.",
        },
        "operations": {
            "type": "array",
            "description": "Several actions applied together (all or nothing); use instead of action.",
            "items": _OPERATION_SCHEMA,
        },
        "evidence": provenance.EVIDENCE_PARAM,
        "both_hold": provenance.BOTH_HOLD_PARAM,
    },
    "required": ["target"],
}

_PENDING_MESSAGES = {"memory": "Memory update awaiting approval", "user": "User profile update awaiting approval"}


def _operations(args: dict[str, Any]) -> list[Any]:
    """The model's call as a list of operations (the single form is a batch of one)."""
    ops = args.get("operations")
    if ops is not None:
        if not isinstance(ops, list) or not ops:
            raise OpError("'operations' must be a non-empty list of {action, content?, old_text?} objects.")
        if args.get("action"):
            raise OpError("Pass either 'action' or 'operations', not both.")
        return ops
    if not args.get("action"):
        raise OpError("Missing 'action': use 'add', 'replace' or 'remove' (or pass 'operations').")
    return [{k: args[k] for k in ("action", "content", "old_text") if k in args}]


def _validate(args: dict[str, Any], store: MemoryStore) -> tuple[str, list[Any]] | ToolResult:
    """(target, operations) or the failed result."""
    # Hermes treats a null or missing target as its notes; a Hermes-tuned model relies on that.
    target = args.get("target") or "memory"
    if target not in TARGETS:
        return ToolResult.failure(f"'target' is required and must be 'memory' or 'user' (got {target!r}).")
    if not store.is_enabled(target):
        return ToolResult.failure(
            f"The {TARGETS[target].label.lower()} is disabled in the configuration; nothing was saved."
        )
    try:
        operations = _operations(args)
        # Validates and threat-scans now, so bad or hostile content is never staged for approval.
        parse_operations(operations)
    except OpError as err:
        if err.show_entries:
            return ToolResult.from_payload(store.failure(target, err, action=str(args.get("action") or "batch")))
        return ToolResult.failure(err.message, target=target, **err.extra)
    return target, operations


def _stage(args: dict[str, Any], target: str, operations: list[Any], ctx: ToolContext) -> ToolResult:
    pending = PendingWrite.objects.create(
        kind="memory",
        tool_name=TOOL_NAME,
        arguments=args,
        session_id=ctx.session_id,
        review_id=ctx.review_id,
    )
    action = str(operations[0].get("action")) if len(operations) == 1 else "batch"
    return ToolResult.success(
        changed=True,
        pending=True,
        target=target,
        action=action,
        message=_PENDING_MESSAGES[target],
        pending_id=pending.pk,
    )


def removed_entries(store: MemoryStore, target: str, operations: list[Any]) -> list[str]:
    """The entries the operations' removes would take out (one each; a remove that matches none,
    or several, is refused by the store anyway)."""
    entries = store.entries(target)
    removed: list[str] = []
    for op in operations:
        old = op.get("old_text") if isinstance(op, dict) and op.get("action") == "remove" else None
        if not isinstance(old, str) or not old:
            continue
        matches = [e for e in entries if old in e]
        exact = [e for e in matches if e == old]
        if len(matches) == 1 or exact:
            removed.append((exact or matches)[0])
    return removed


def memory_tool(store_factory: Callable[[], MemoryStore] = MemoryStore) -> Tool:
    def handler(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if private_chats.is_private(ctx.session_id):  # read, never written from (nor held for the inbox)
            return ToolResult.failure(private_chats.REFUSAL)
        store = store_factory()
        checked = _validate(args, store)
        if isinstance(checked, ToolResult):
            return checked
        target, operations = checked
        duplicate = memory_duplicate(store, target, operations)
        if duplicate:
            return ToolResult.failure(duplicate, target=target)
        for_skills = memory_skills.refusal(operations, ctx.actor)
        if for_skills:
            return ToolResult.failure(for_skills, target=target)
        existing = all_entries(store)
        decision = verifier.second_reading(args, ctx, existing, provenance.decide(args, ctx, "memory", existing))
        if decision.held_reason and any(op.get("content") for op in operations if isinstance(op, dict)):
            return holds.hold("memory", TOOL_NAME, args, ctx, decision)
        for entry in removed_entries(store, target, operations):
            removal = provenance.decide_removal(args, ctx, "memory", entry)
            if removal.held_reason:
                return holds.hold("memory", TOOL_NAME, args, ctx, removal)
        if ctx.stage_writes.get("memory"):
            return _stage(args, target, operations, ctx)
        result = memory_budget.write(store, target, operations, decision.prov, ctx.turn_state)
        if result.ok:
            holds.settle_conflicts(args, ctx)
        return result

    return Tool(name=TOOL_NAME, description=DESCRIPTION, parameters=PARAMETERS, handler=handler)


def make_tool() -> Tool:
    return memory_tool()


def apply_pending(pending: PendingWrite, prov: Provenance, store: MemoryStore | None = None) -> ToolResult:
    """Apply an approved pending memory write through the store; returns the tool's result.

    The caller (the approval view) owns the PendingWrite's status; it can pass edited
    `arguments` by updating them before calling this.
    """
    store = store or MemoryStore()
    args = pending.arguments if isinstance(pending.arguments, dict) else {}
    checked = _validate(args, store)
    if isinstance(checked, ToolResult):
        return checked
    target, operations = checked
    return ToolResult.from_payload(store.apply(target, operations, prov))
