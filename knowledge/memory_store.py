"""The memory store (SPEC §2): MEMORY.md (target "memory") and USER.md (target "user").

The files are the source of truth; every write the product makes (agent tool, review, flush,
dashboard, undo) goes through this one class so the lock, the limits, the threat scan and the
change log cannot be bypassed.

- Lock: an exclusive `fcntl.flock` on `<file>.lock` (Hermes' convention, so a Hermes agent on
  the same home serialises with us). flock locks belong to an open file description, so two
  threads of one process exclude each other too.
- Every mutation re-reads the file under the lock: the disk, not a cached list, is the state
  being changed, so concurrent writers never lose each other's entries.
- Writes go to a temp file in the same folder, fsync, `os.replace`, fsync of the folder: a
  reader or a crash sees the old file or the new one, never half of one.
- The change log is written while the lock is still held, so its order is the order on disk;
  a disk state that differs from the last logged `after` is logged first as an external edit.
"""

from __future__ import annotations

import contextlib
import fcntl
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from agent import config as hermes_config
from knowledge import changelog
from knowledge.fileio import atomic_write, fsync_dir
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance
from knowledge.threat_scan import MAX_SCAN_CHARS, ThreatHit, scan

ENTRY_DELIMITER = "\n§\n"
PREVIEW_CHARS = 80
ACTIONS = ("add", "replace", "remove")
Result = dict[str, Any]

RULE = "═" * 46
MAX_FAILURES_PER_TURN = 3
FAILURE_KEY = "memory_failures"
# Failures that mean "the model is trying to consolidate and not getting there" (SPEC §2).
_COUNTED_FAILURES = frozenset({"overflow", "no_match"})


@dataclass(frozen=True)
class TargetSpec:
    name: str
    filename: str
    limit_key: str
    enabled_key: str
    label: str
    updated_message: str
    header: str


def parse(raw: str) -> list[str]:
    """Entries of a file: split on the delimiter, strip, drop empties and exact duplicates."""
    seen: set[str] = set()
    entries = []
    for part in raw.split(ENTRY_DELIMITER):
        entry = part.strip()
        if entry and entry not in seen:
            seen.add(entry)
            entries.append(entry)
    return entries


def serialise(entries: Sequence[str]) -> str:
    return ENTRY_DELIMITER.join(entries)


def format_usage(chars: int, limit: int) -> str:
    percent = (200 * chars + limit) // (2 * limit)  # rounded half up, unlike round()'s banker's rounding
    return f"{percent}% — {chars}/{limit} chars"


def preview(entry: str) -> str:
    return entry if len(entry) <= PREVIEW_CHARS else entry[:PREVIEW_CHARS] + "…"


@dataclass(frozen=True)
class Op:
    action: str
    content: str = ""
    old_text: str = ""
    index: int | None = None  # dashboard edits address an entry by position instead of old_text
    expected: str | None = None


class OpError(Exception):
    """A rejected operation; `kind` drives the per-turn failure count, `extra` joins the result."""

    def __init__(self, message: str, kind: str = "invalid", show_entries: bool = False, **extra: Any) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.show_entries = show_entries
        self.extra = extra


@dataclass(frozen=True)
class Outcome:
    entries: list[str]
    changed: bool
    summary: str
    unchanged_message: str


def _text_arg(raw: Mapping[str, Any], key: str, prefix: str) -> str:
    value = raw.get(key)
    if value is None:
        return ""
    if not isinstance(value, str):
        raise OpError(f"{prefix}'{key}' must be a string.")
    return value.strip()


def parse_operations(operations: Sequence[Any], index: int | None = None, expected: str | None = None) -> list[Op]:
    """Validate and threat-scan every operation before anything is locked or written."""
    if not operations:
        raise OpError("No operation given: pass 'action' (add, replace or remove) or a non-empty 'operations' list.")
    ops = []
    for n, raw in enumerate(operations, 1):
        prefix = f"Operation {n}: " if len(operations) > 1 else ""
        if not isinstance(raw, Mapping):
            raise OpError(f"{prefix}each operation must be an object with an 'action'.")
        action = raw.get("action")
        if action not in ACTIONS:
            raise OpError(f"{prefix}'action' must be 'add', 'replace' or 'remove' (got {action!r}).")
        content = _text_arg(raw, "content", prefix)
        old_text = _text_arg(raw, "old_text", prefix)
        if action in ("add", "replace") and not content:
            hint = " To delete an entry use action 'remove'." if action == "replace" else ""
            raise OpError(f"{prefix}'{action}' needs non-empty 'content'.{hint}")
        if action in ("replace", "remove") and not old_text and index is None:
            raise OpError(f"{prefix}'{action}' needs 'old_text': a short substring that identifies the entry.")
        hit = entry_threat(content) if content else None
        if hit is not None:
            where = f" (operation {n})" if len(operations) > 1 else ""
            raise OpError(
                f"Blocked: content matches threat pattern '{hit.id}'{where}: {hit.reason}. Nothing was saved.",
                kind="blocked",
                threat=hit.id,
            )
        ops.append(Op(action=str(action), content=content, old_text=old_text, index=index, expected=expected))
    return ops


def _locate(spec: TargetSpec, entries: list[str], op: Op, where: str) -> int:
    if op.index is not None:
        if not 0 <= op.index < len(entries) or (op.expected is not None and entries[op.index] != op.expected.strip()):
            raise OpError(
                f"{where}That {spec.label.lower()} entry changed on disk since the page was loaded; reload and retry.",
                kind="stale",
            )
        return op.index
    matches = [i for i, entry in enumerate(entries) if op.old_text in entry]
    if not matches:
        raise OpError(
            f"{where}No {spec.label.lower()} entry contains old_text {op.old_text!r}. Nothing was saved. Use a short "
            "substring copied from one of the current entries (listed in current_entries) and retry.",
            kind="no_match",
            show_entries=True,
        )
    if len(matches) == 1:
        return matches[0]
    exact = [i for i in matches if entries[i] == op.old_text]
    if exact:  # the whole entry was quoted: no ambiguity left
        return exact[0]
    previews = [preview(e) for e in mask_entries([entries[i] for i in matches])]
    raise OpError(
        f"{where}old_text {op.old_text!r} matches {len(matches)} different entries; be more specific. Nothing was "
        "saved. Matching entries: " + "; ".join(f'"{p}"' for p in previews),
        kind="ambiguous",
        matches=previews,
    )


def apply_ops(spec: TargetSpec, current: list[str], ops: Sequence[Op], limit: int) -> Outcome:
    """Apply `ops` to a copy of `current`; raise OpError (nothing applied) on any failure."""
    entries = list(current)
    summaries: list[str] = []
    duplicate = False
    new_chars = 0
    for n, op in enumerate(ops, 1):
        where = f"Operation {n} ({op.action}): " if len(ops) > 1 else ""
        if op.action == "add":
            if op.content in entries:
                duplicate = True
                continue
            entries.append(op.content)
            new_chars += len(op.content)
            summaries.append(f"add: {preview(op.content)}")
            continue
        idx = _locate(spec, entries, op, where)
        if op.action == "remove":
            summaries.append(f"remove: {preview(entries[idx])}")
            del entries[idx]
        elif entries[idx] != op.content:
            summaries.append(f"replace: {preview(entries[idx])} -> {preview(op.content)}")
            entries[idx] = op.content
            new_chars += len(op.content)
            entries = parse(serialise(entries))  # replacing with another entry's text merges the two
    changed = entries != current
    before_chars, after_chars = len(serialise(current)), len(serialise(entries))
    # Shrinking an over-limit file (limit lowered, hand edits) is consolidation and is allowed.
    if changed and after_chars > limit and after_chars > before_chars:
        what = "the new entry is" if len(ops) == 1 else "the new content is"
        raise OpError(
            f"{spec.label} is at {before_chars}/{limit} chars; {what} {new_chars} chars and would bring it to "
            f"{after_chars}/{limit} chars, over the limit. Nothing was saved and nothing was evicted. Consolidate "
            "now: use action 'replace' to merge or shorten entries, or 'remove' for outdated ones (see "
            "current_entries), then retry in this turn.",
            kind="overflow",
            show_entries=True,
        )
    unchanged = "Entry already exists; nothing saved" if duplicate else "No change: the entry already has this text"
    return Outcome(entries=entries, changed=changed, summary="; ".join(summaries), unchanged_message=unchanged)


TARGETS: dict[str, TargetSpec] = {
    "memory": TargetSpec(
        name="memory",
        filename="MEMORY.md",
        limit_key="memory_char_limit",
        enabled_key="memory_enabled",
        label="Memory",
        updated_message="Memory updated",
        header="MEMORY (your personal notes)",
    ),
    "user": TargetSpec(
        name="user",
        filename="USER.md",
        limit_key="user_char_limit",
        enabled_key="user_profile_enabled",
        label="User profile",
        updated_message="User profile updated",
        header="USER PROFILE (who the user is)",
    ),
}


@dataclass(frozen=True)
class FlaggedEntry:
    """An entry on disk that the threat scan blocks from the prompt (shown in the UI)."""

    index: int
    text: str
    hit: ThreatHit


def entry_threat(entry: str) -> ThreatHit | None:
    # An entry longer than the scan window would carry an unscanned tail into the prompt; no
    # curated note is that long, so it is blocked outright.
    if len(entry) > MAX_SCAN_CHARS:
        return ThreatHit(id="oversize", reason=f"entry too large to scan ({len(entry)} chars)")
    return scan(entry)


def mask_entries(entries: Sequence[str]) -> list[str]:
    """Entries as they may be shown to a model: blocked ones replaced by a placeholder."""
    out = []
    for entry in entries:
        hit = entry_threat(entry)
        out.append(entry if hit is None else f"[BLOCKED: {hit.reason} ({hit.id})]")
    return out


class MemoryStore:
    def __init__(self, config: hermes_config.Config | None = None) -> None:
        self._config = config

    @property
    def config(self) -> hermes_config.Config:
        return self._config or hermes_config.get()

    # --- reading ----------------------------------------------------------------------------

    def spec(self, target: str) -> TargetSpec:
        try:
            return TARGETS[target]
        except KeyError:
            raise ValueError(f"unknown memory target {target!r} (use 'memory' or 'user')") from None

    def path(self, target: str) -> Path:
        return self.config.memories_dir / self.spec(target).filename

    def limit(self, target: str) -> int:
        return int(self.config.get("memory", self.spec(target).limit_key))

    def is_enabled(self, target: str) -> bool:
        return bool(self.config.get("memory", self.spec(target).enabled_key))

    def enabled_targets(self) -> list[str]:
        return [t for t in TARGETS if self.is_enabled(t)]

    def read_raw(self, target: str) -> str:
        return _read(self.path(target))[0]

    def entries(self, target: str) -> list[str]:
        return parse(self.read_raw(target))

    def usage(self, target: str) -> tuple[int, int]:
        return len(serialise(self.entries(target))), self.limit(target)

    def usage_text(self, target: str) -> str:
        return format_usage(*self.usage(target))

    def flagged_entries(self, target: str) -> list[FlaggedEntry]:
        flagged = []
        for i, entry in enumerate(self.entries(target)):
            hit = entry_threat(entry)
            if hit is not None:
                flagged.append(FlaggedEntry(index=i, text=entry, hit=hit))
        return flagged

    def render_block(self, target: str) -> str:
        """One target's frozen-snapshot block; "" when it has no entries."""
        entries = self.entries(target)
        if not entries:
            return ""
        spec = self.spec(target)
        usage = format_usage(len(serialise(entries)), self.limit(target))
        return f"{RULE}\n{spec.header} [{usage}]\n{RULE}\n{serialise(mask_entries(entries))}"

    def render_prompt_blocks(self) -> str:
        """The memory part of a session's system prompt, read once at session start.

        Blocked entries are masked here only; the file keeps them so the user can see and
        remove them. Empty targets are left out, as Hermes does, to keep the prompt short.
        """
        blocks = [self.render_block(t) for t in self.enabled_targets()]
        return "\n\n".join(b for b in blocks if b)

    # --- writing ----------------------------------------------------------------------------

    def apply(
        self,
        target: str,
        operations: Sequence[Mapping[str, Any]],
        prov: Provenance,
        turn_state: dict[str, Any] | None = None,
    ) -> Result:
        """Apply tool-style operations atomically (all or nothing; limit checked at the end)."""
        spec = self.spec(target)
        first = operations[0] if len(operations) == 1 else None
        action = str(first.get("action")) if isinstance(first, Mapping) else "batch"
        try:
            ops = parse_operations(operations)
        except OpError as err:
            return self._error(spec, action, err, turn_state)
        return self._mutate(spec, ops, prov, action, turn_state)

    def add(self, target: str, content: str, prov: Provenance, turn_state: dict[str, Any] | None = None) -> Result:
        return self.apply(target, [{"action": "add", "content": content}], prov, turn_state)

    def replace(
        self, target: str, old_text: str, content: str, prov: Provenance, turn_state: dict[str, Any] | None = None
    ) -> Result:
        return self.apply(target, [{"action": "replace", "old_text": old_text, "content": content}], prov, turn_state)

    def remove(self, target: str, old_text: str, prov: Provenance, turn_state: dict[str, Any] | None = None) -> Result:
        return self.apply(target, [{"action": "remove", "old_text": old_text}], prov, turn_state)

    # The dashboard addresses entries by position; `expected` (the text the page showed) guards
    # against editing an entry that changed on disk since the page was rendered.
    def add_entry(self, target: str, text: str, prov: Provenance) -> Result:
        return self.add(target, text, prov)

    def edit_entry(
        self, target: str, index: int, new_text: str, prov: Provenance, expected: str | None = None
    ) -> Result:
        ops = [{"action": "replace", "content": new_text}]
        try:
            parsed = parse_operations(ops, index=index, expected=expected)
        except OpError as err:
            return self._error(self.spec(target), "replace", err, None)
        return self._mutate(self.spec(target), parsed, prov, "replace", None)

    def delete_entry(self, target: str, index: int, prov: Provenance, expected: str | None = None) -> Result:
        parsed = [Op(action="remove", index=index, expected=expected)]
        return self._mutate(self.spec(target), parsed, prov, "remove", None)

    def restore(self, change: KnowledgeChange, prov: Provenance) -> KnowledgeChange:
        """Write `change.before` back byte-exactly (the change-log restorer for kind "memory")."""
        spec = self.spec(change.target)
        with self._locked(spec) as path:
            raw, existed, _ = _read(path)
            self._sync_external(spec, raw, existed)
            if change.existed_before:
                atomic_write(path, change.before)
            elif existed:
                path.unlink()
                fsync_dir(path.parent)
            return changelog.record(
                kind="memory",
                target=spec.name,
                action="undo",
                prov=prov,
                before=raw,
                after=change.before,
                existed_before=existed,
                exists_after=change.existed_before,
                undoes=change,
                summary=f"Undo of change #{change.pk} ({change.action} by {change.actor})",
            )

    # --- internals --------------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self, spec: TargetSpec) -> Iterator[Path]:
        path = self.path(spec.name)
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path.with_name(path.name + ".lock"), "a+b") as lock_file:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
            try:
                # Only a lock holder creates temp files, so any found now were left by a writer
                # that was killed mid-write; the real file is intact and they can go.
                for stale in path.parent.glob(f".{path.name}.*.tmp"):
                    with contextlib.suppress(FileNotFoundError):
                        stale.unlink()
                yield path
            finally:
                fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)

    def _mutate(
        self, spec: TargetSpec, ops: list[Op], prov: Provenance, action: str, turn_state: dict[str, Any] | None
    ) -> Result:
        limit = self.limit(spec.name)
        with self._locked(spec) as path:
            raw, existed, lossy = _read(path)
            self._sync_external(spec, raw, existed)
            current = parse(raw)
            try:
                outcome = apply_ops(spec, current, ops, limit)
            except OpError as err:
                return self._error(spec, action, err, turn_state, current, limit)
            if turn_state is not None:
                turn_state[FAILURE_KEY] = 0
            result: Result = {"success": True, "changed": outcome.changed, "target": spec.name, "action": action}
            if outcome.changed:
                result["message"] = spec.updated_message
                try:
                    result.update(self._commit(spec, path, raw, existed, lossy, outcome, prov, action))
                except OSError as exc:
                    # Disk full, quota, read-only folder: the atomic write left the old file
                    # intact, so say plainly that nothing was saved.
                    return {
                        "success": False,
                        "error": f"Could not save {spec.filename}: {exc.strerror or exc}. Nothing was changed.",
                        "target": spec.name,
                    }
            else:
                result["message"] = outcome.unchanged_message
            result["usage"] = format_usage(len(serialise(outcome.entries)), limit)
            result["entry_count"] = len(outcome.entries)
            return result

    def _commit(
        self,
        spec: TargetSpec,
        path: Path,
        raw: str,
        existed: bool,
        lossy: bool,
        outcome: Outcome,
        prov: Provenance,
        action: str,
    ) -> dict[str, str]:
        """Back up an oddly shaped file, write the new one, log the change; extra result fields."""
        extra: dict[str, str] = {}
        if existed and (lossy or serialise(parse(raw)) != raw.strip()):
            backup = _backup(path)
            extra["backup"] = str(backup)
            extra["note"] = (
                f"{spec.filename} was not in the expected '§'-separated shape; the previous file was saved to "
                f"{backup.name} before rewriting."
            )
        new_raw = serialise(outcome.entries)
        atomic_write(path, new_raw)
        changelog.record(
            kind="memory",
            target=spec.name,
            action=action,
            prov=prov,
            before=raw,
            after=new_raw,
            existed_before=existed,
            summary=outcome.summary,
        )
        return extra

    def _sync_external(self, spec: TargetSpec, raw: str, existed: bool) -> None:
        """Log an edit made outside this store (by hand, by Hermes) before changing the file."""
        last = KnowledgeChange.objects.filter(kind="memory", target=spec.name).order_by("-id").first()
        if last is None or (last.after, last.exists_after) == (raw, existed):
            return
        changelog.record(
            kind="memory",
            target=spec.name,
            action="external_edit",
            prov=Provenance(actor="external"),
            before=last.after,
            after=raw,
            existed_before=last.exists_after,
            exists_after=existed,
            summary=f"{spec.filename} was changed outside the dashboard",
        )

    def _error(
        self,
        spec: TargetSpec,
        action: str,
        err: OpError,
        turn_state: dict[str, Any] | None,
        current: list[str] | None = None,
        limit: int | None = None,
    ) -> Result:
        result: Result = {"success": False, "error": err.message, "target": spec.name, "action": action}
        if current is not None and limit is not None:
            result["usage"] = format_usage(len(serialise(current)), limit)
            if err.show_entries:
                # Masked: a poisoned entry must not reach the model through an error either.
                result["current_entries"] = mask_entries(current)
        result.update(err.extra)
        if turn_state is not None and err.kind in _COUNTED_FAILURES:
            failures = int(turn_state.get(FAILURE_KEY, 0)) + 1
            turn_state[FAILURE_KEY] = failures
            if failures >= MAX_FAILURES_PER_TURN:
                return {
                    "success": False,
                    "done": True,
                    "target": spec.name,
                    "action": action,
                    "error": (
                        f"{spec.label} update failed {failures} times this turn. Stop retrying memory calls: "
                        "leave memory as it is and continue with your reply to the user; the fact can be "
                        "saved in a later turn."
                    ),
                    "last_error": err.message,
                    "usage": result.get("usage", ""),
                }
        return result


def _read(path: Path) -> tuple[str, bool, bool]:
    """(text, existed, lossy): bytes are decoded without newline translation so undo is exact."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return "", False, False
    text = data.decode("utf-8", errors="replace")
    return text, True, text.encode("utf-8") != data


def _backup(path: Path) -> Path:
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S-%f")
    backup = path.with_name(f"{path.name}.bak.{stamp}")
    atomic_write(backup, path.read_bytes())
    return backup


def _restore_change(change: KnowledgeChange, prov: Provenance) -> KnowledgeChange:
    return MemoryStore().restore(change, prov)


changelog.register_restorer("memory", _restore_change)
