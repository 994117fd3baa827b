"""The skill tools (docs/BEHAVIOUR.md, Skills): skills_list, skill_view, skill_manage.

Thin adapters over knowledge.skills.store.SkillStore: argument checking, the exact result shapes the
model sees, and staging of review writes when skills.write_approval is on. Every failure comes
back as a failed ToolResult ({"success": false, "error": ...}) so the model can correct itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.admission import holds, provenance
from agent.admission import skills as skill_admission
from agent.tools import memory_skills
from agent.tools.registry import Tool, ToolContext
from agent.tools.results import ToolResult
from foundation import config as hermes_config
from knowledge import private_chats
from knowledge.memory.duplicates import all_entries
from knowledge.memory.store import MemoryStore
from knowledge.models import PendingWrite
from knowledge.provenance import Provenance
from knowledge.skills.duplicates import skill_duplicate
from knowledge.skills.format import SkillError, check_name, parse_skill_md, require_frontmatter, validate_existing
from knowledge.skills.store import SkillStore

Action = Callable[[SkillStore, dict[str, Any], Provenance], Path]


def _store() -> SkillStore:
    # A fresh store per call: it reads the current config (e.g. skills.disabled changed in the UI).
    return SkillStore(hermes_config.get())


# ----- skills_list / skill_view ---------------------------------------------------------------

# A SKILL.md or file up to this size comes back whole, as Hermes returns it (7 of its bundled
# skills are over 20 KB); a model with a small context gets pages of half its window instead
# (at ~4 characters a token), each saying where the next one starts.
VIEW_PAGE_CHARS = 200_000


def _skills_list(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    category = args.get("category") or None
    if category is not None and not isinstance(category, str):
        return ToolResult.failure("category must be a string.")
    usable = _store().available()
    categories = sorted({s.category for s in usable if s.category})
    shown = [s for s in usable if category is None or s.category == category]
    return ToolResult.listing(
        skills=[{"name": s.name, "description": s.description, "category": s.category} for s in shown],
        categories=categories,
        count=len(shown),
    )


def _skill_view(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    name = args.get("name")
    file_path = args.get("file_path") or None
    store = _store()
    try:
        info = store.get(check_name(name))
        if not info.enabled:
            return ToolResult.failure(f"Skill '{info.name}' is disabled.")
        if info.broken:
            return ToolResult.failure(f"Skill '{info.name}' is broken and cannot be used: {info.error}")
        content = store.read(info.name, file_path)
        files = [] if file_path else store.files(info.name)
    except SkillError as exc:
        return ToolResult.failure(str(exc))
    try:
        page = _page(content, args.get("offset"), min(VIEW_PAGE_CHARS, store.config.context_window * 2))
    except SkillError as exc:
        return ToolResult.failure(str(exc))
    store.record_view(info.name)
    if file_path:
        return ToolResult.success(name=info.name, file_path=file_path, **page)
    return ToolResult.success(name=info.name, category=info.category, path=str(info.path), **page, linked_files=files)


def _page(content: str, offset: object, size: int) -> dict[str, Any]:
    """The content from `offset`, whole when it fits in one result (Hermes' bundled skills do:
    the largest is well under VIEW_PAGE_CHARS), else one page with where the next one starts."""
    if offset is None:
        offset = 0
    if not isinstance(offset, int) or isinstance(offset, bool) or offset < 0:
        raise SkillError("offset must be a whole number of characters, 0 or more.")
    if offset > len(content):
        raise SkillError(f"offset {offset:,} is past the end of the file ({len(content):,} characters).")
    chunk = content[offset : offset + size]
    end = offset + len(chunk)
    if offset == 0 and end == len(content):
        return {"content": chunk}
    page: dict[str, Any] = {"content": chunk, "offset": offset, "total_chars": len(content)}
    if end < len(content):
        page.update(
            truncated=True,
            next_offset=end,
            note=f"This is characters {offset:,}-{end:,} of {len(content):,}; call skill_view again with "
            f"offset={end} for the rest.",
        )
    return page


# ----- skill_manage ---------------------------------------------------------------------------


def _text(a: dict[str, Any], key: str) -> str:
    value = a.get(key)
    if not isinstance(value, str):
        raise SkillError(f"'{key}' is required for {a.get('action')} and must be a string.")
    return value


def _create(store: SkillStore, a: dict[str, Any], prov: Provenance) -> Path:
    return store.create(a["name"], _text(a, "content"), category=a.get("category") or "", prov=prov)


def _edit(store: SkillStore, a: dict[str, Any], prov: Provenance) -> Path:
    return store.edit(a["name"], _text(a, "content"), prov=prov)


def _patch(store: SkillStore, a: dict[str, Any], prov: Provenance) -> Path:
    return store.patch(
        a["name"],
        _text(a, "old_string"),
        _text(a, "new_string"),
        file_path=a.get("file_path") or None,
        replace_all=bool(a.get("replace_all")),
        prov=prov,
    )


def _write_file(store: SkillStore, a: dict[str, Any], prov: Provenance) -> Path:
    return store.write_file(a["name"], _text(a, "file_path"), _text(a, "file_content"), prov=prov)


def _remove_file(store: SkillStore, a: dict[str, Any], prov: Provenance) -> Path:
    return store.remove_file(a["name"], _text(a, "file_path"), prov=prov)


def _delete(store: SkillStore, a: dict[str, Any], prov: Provenance) -> Path:
    return store.delete(a["name"], prov=prov)


def _disable(store: SkillStore, a: dict[str, Any], prov: Provenance) -> Path:
    return store.disable(a["name"], prov=prov)


def _enable(store: SkillStore, a: dict[str, Any], prov: Provenance) -> Path:
    return store.enable(a["name"], prov=prov)


# action -> (store call, past-tense verb for the result message)
ACTIONS: dict[str, tuple[Action, str]] = {
    "create": (_create, "created"),
    "edit": (_edit, "updated"),
    "patch": (_patch, "updated"),
    "write_file": (_write_file, "updated"),
    "remove_file": (_remove_file, "updated"),
    "delete": (_delete, "deleted"),
    "disable": (_disable, "disabled"),
    "enable": (_enable, "enabled"),
}


def _precheck(store: SkillStore, args: dict[str, Any]) -> tuple[str, str]:
    """Checks shared by applying and staging; returns (action, name) or raises SkillError."""
    action = args.get("action")
    if not isinstance(action, str) or action not in ACTIONS:
        raise SkillError(f"Unknown action {action!r}. Use one of: {', '.join(ACTIONS)}.")
    name = check_name(args.get("name"))
    if action == "create":
        # As Hermes: the frontmatter may name the skill otherwise; the folder is `name` (run_action says so).
        parse_skill_md(_text(args, "content"))
        return action, name
    info = store.get(name)
    if not info.enabled and action != "enable":
        raise SkillError(f"Skill '{name}' is disabled; enable it before changing it.")
    if action == "edit":
        require_frontmatter(_text(args, "content"))
        validate_existing(args["content"], info.name, info.path.name, lenient=bool(info.warning))
    return action, name


def run_action(args: dict[str, Any], prov: Provenance, store: SkillStore | None = None) -> ToolResult:
    """Apply one skill_manage call through the store; returns the tool's result."""
    store = store or _store()
    try:
        action, name = _precheck(store, args)
        fn, verb = ACTIONS[action]
        path = fn(store, {**args, "name": name}, prov)
    except SkillError as exc:
        return ToolResult.failure(str(exc))
    listed = parse_skill_md(args["content"]).name if action == "create" else name
    if listed != name:
        return ToolResult.success(
            changed=True,
            message=f"Skill '{listed}' {verb}",
            path=str(path),
            note=f"Its frontmatter names it '{listed}': it is listed and invoked as '{listed}'; its folder is "
            f"'{name}'. Either name finds it.",
        )
    return ToolResult.success(changed=True, message=f"Skill '{name}' {verb}", path=str(path))


# The actions that claim something was learned, so they must show where it was learned.
EVIDENCED = ("create", "patch", "edit")
# The actions that take away what the person had: a review may do them only when asked.
REMOVALS = ("delete", "disable", "remove_file")


Restated = tuple[str, str] | None  # a memory entry (file, text) a skill restates


def _checked(args: dict[str, Any], ctx: ToolContext, action: str) -> tuple[provenance.Decision, Restated]:
    """The evidence rule's and the verifier's decision on a learned write, and the memory entry
    (file, text) a new or rewritten skill restates (by the verifier's duplicate-of, or lexically)."""
    decision = provenance.decide(args, ctx, "skill")
    if action not in EVIDENCED:
        return decision, None
    decision, restated = skill_admission.second_reading(args, ctx, decision)
    if restated is None and action in ("create", "edit") and not decision.held_reason:
        restated = memory_skills.restated_entry(str(args.get("content") or ""), all_entries(MemoryStore()))
    return decision, restated


def _offer_removal(result: ToolResult, restated: Restated, name: str, ctx: ToolContext) -> ToolResult:
    """A saved skill that restates a memory entry: the entry is offered for removal in the inbox
    (the model does not remove it itself: what the person had goes only with their approval)."""
    if not result.ok or restated is None or ctx.actor == "user":
        return result
    pending = memory_skills.offer_removal(*restated, name, ctx)
    note = (
        f"It restates the {restated[0]} entry {restated[1]!r}; removing that entry from memory waits for the "
        f"person's approval in their inbox (#{pending.pk}). Do not remove it yourself."
    )
    return ToolResult.success(**result.data, note=note)


def _skill_manage(args: dict[str, Any], ctx: ToolContext) -> ToolResult:
    if private_chats.is_private(ctx.session_id):  # read, never written from (nor held for the inbox)
        return ToolResult.failure(private_chats.REFUSAL)
    store = _store()
    try:
        action, name = _precheck(store, args)
    except SkillError as exc:
        return ToolResult.failure(str(exc))
    if action == "create":
        duplicate = skill_duplicate(store, name, _text(args, "content"))
        if duplicate:
            return ToolResult.failure(duplicate)
    decision, restated = _checked(args, ctx, action)
    if action in EVIDENCED and decision.held_reason:
        return holds.hold("skill", "skill_manage", args, ctx, decision)
    if action in REMOVALS:
        subject = f"{name} {args.get('file_path') or ''}".strip()
        decision = provenance.decide_removal(args, ctx, "skill", subject)
        if decision.held_reason:
            return holds.hold("skill", "skill_manage", args, ctx, decision)
    if not ctx.stage_writes.get("skills"):
        result = run_action(args, decision.prov, store)
        if restated is None and action == "patch" and result.ok and not args.get("file_path"):
            # A patch is compared as the whole skill it leaves, which only exists once it is made.
            restated = memory_skills.restated_entry(store.read(name), all_entries(MemoryStore()))
        return _offer_removal(result, restated, name, ctx)
    PendingWrite.objects.create(
        kind="skill",
        tool_name="skill_manage",
        arguments=args,
        session_id=ctx.session_id,
        review_id=ctx.review_id,
    )
    verb = ACTIONS[action][1]
    return ToolResult.success(changed=True, pending=True, message=f"Skill '{name}' {verb} awaiting approval")


def apply_pending(pending: PendingWrite, prov: Provenance) -> ToolResult:
    """Apply an approved staged skill_manage call; returns its result (the caller sets status)."""
    return run_action(dict(pending.arguments), prov)


# ----- schemas --------------------------------------------------------------------------------

_SKILLS_LIST_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"category": {"type": "string", "description": "Only skills in this category."}},
}
_SKILL_VIEW_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "description": "The skill's name."},
        "file_path": {
            "type": "string",
            "description": "A supporting file to read instead of SKILL.md, e.g. references/api.md.",
        },
        "offset": {
            "type": "integer",
            "description": "Where to start reading, in characters; only for a file too long for one result.",
        },
    },
    "required": ["name"],
}
_SKILL_MANAGE_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {"type": "string", "enum": list(ACTIONS)},
        "name": {"type": "string", "description": "Skill name: lowercase letters, digits, '.', '_', '-'."},
        "content": {
            "type": "string",
            "description": "create/edit: the whole SKILL.md (YAML frontmatter with name and description, "
            "then the Markdown body).",
        },
        "old_string": {"type": "string", "description": "patch: the exact text to replace (unique)."},
        "new_string": {"type": "string", "description": "patch: the replacement text."},
        "replace_all": {"type": "boolean", "description": "patch: replace every occurrence."},
        "category": {"type": "string", "description": "create: optional category folder."},
        "file_path": {
            "type": "string",
            "description": "patch/write_file/remove_file: a file in the skill's folder, e.g. references/api.md "
            "or LICENSE.txt (patch defaults to SKILL.md).",
        },
        "file_content": {"type": "string", "description": "write_file: the file's full content."},
        "evidence": provenance.EVIDENCE_PARAM,
    },
    "required": ["action", "name"],
}


def make_tools() -> list[Tool]:
    return [
        Tool(
            name="skills_list",
            description="List the available skills (name, description, category), optionally for one category.",
            parameters=_SKILLS_LIST_PARAMS,
            handler=_skills_list,
            parallel_safe=True,
        ),
        Tool(
            name="skill_view",
            description="Load a skill: its full SKILL.md and the list of its supporting files, or one "
            "supporting file when file_path is given. Load a matching skill before acting.",
            parameters=_SKILL_VIEW_PARAMS,
            handler=_skill_view,
            parallel_safe=True,
            # A page of content plus the JSON around it (names, the list of files).
            max_result_chars=VIEW_PAGE_CHARS + 20_000,
        ),
        Tool(
            name="skill_manage",
            description="Create, edit, patch, delete, enable or disable a skill, or write/remove one of its "
            "supporting files. Save a reusable procedure as a skill; patch a skill that proved wrong.",
            parameters=_SKILL_MANAGE_PARAMS,
            handler=_skill_manage,
        ),
    ]
