"""The memory store (docs/BEHAVIOUR.md, Memory): MEMORY.md (target "memory") and USER.md (target "user").

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
import dataclasses
import fcntl
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from foundation import config as hermes_config
from foundation.fileio import atomic_write, fsync_dir
from knowledge import changelog
from knowledge.memory.ops import (
    RULE,
    TARGETS,
    FlaggedEntry,
    Op,
    OpError,
    Outcome,
    Result,
    TargetSpec,
    apply_ops,
    entry_flags,
    format_usage,
    mask_entries,
    parse,
    parse_operations,
    serialise,
)
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance


class WriteRefused(Exception):
    """A write the store refused, nothing changed. `result` is the refusal as the tool reports it
    (with usage and, where they help pick an entry, the current entries); `kind` says what went
    wrong ("overflow", "no_match", "blocked", "invalid", "disk", ...), for the caller's policy."""

    def __init__(self, result: Result, kind: str) -> None:
        super().__init__(str(result.get("error", "")))
        self.result = result
        self.kind = kind


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
        return int(self.config.value(f"memory.{self.spec(target).limit_key}"))

    def is_enabled(self, target: str) -> bool:
        return bool(self.config.value(f"memory.{self.spec(target).enabled_key}"))

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
        entries = self.entries(target)
        for i, (entry, hit) in enumerate(zip(entries, entry_flags(entries), strict=True)):
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

    def write(self, target: str, operations: Sequence[Mapping[str, Any]], prov: Provenance) -> Result:
        """Apply tool-style operations atomically (all or nothing; limit checked at the end).
        Returns the success result; raises WriteRefused when nothing was written."""
        spec = self.spec(target)
        first = operations[0] if len(operations) == 1 else None
        action = str(first.get("action")) if isinstance(first, Mapping) else "batch"
        try:
            ops = parse_operations(operations, limit=self.limit(target))
        except OpError as err:
            raise WriteRefused(self.failure(target, err, action=action), err.kind) from err
        return self._mutate(spec, ops, prov, action)

    def apply(self, target: str, operations: Sequence[Mapping[str, Any]], prov: Provenance) -> Result:
        """`write`, with a refusal returned as its result instead of raised."""
        try:
            return self.write(target, operations, prov)
        except WriteRefused as refused:
            return refused.result

    def failure(self, target: str, err: OpError, action: str = "") -> Result:
        """An argument error as the tool reports it: with current_entries and usage when they help
        the model pick the entry (a replace/remove without old_text), as Hermes does."""
        spec = self.spec(target)
        if not err.show_entries:
            return self._error(spec, action, err)
        return self._error(spec, action, err, self.entries(target), self.limit(target))

    def add(self, target: str, content: str, prov: Provenance) -> Result:
        return self.apply(target, [{"action": "add", "content": content}], prov)

    def replace(self, target: str, old_text: str, content: str, prov: Provenance) -> Result:
        return self.apply(target, [{"action": "replace", "old_text": old_text, "content": content}], prov)

    def remove(self, target: str, old_text: str, prov: Provenance) -> Result:
        return self.apply(target, [{"action": "remove", "old_text": old_text}], prov)

    def supersede(self, target: str, old_entry: str, content: str, prov: Provenance) -> Result:
        """Replace the whole entry `old_entry` with `content`, logged as "supersede": the new entry
        took the old one's place because they cannot both hold (a conflict the person settled)."""
        ops = [{"action": "replace", "old_text": old_entry, "content": content}]
        try:
            parsed = parse_operations(ops, limit=self.limit(target))
            summary = f"superseded: {old_entry[:120]} -> {content[:120]}"
            return self._mutate(self.spec(target), parsed, prov, "supersede", summary)
        except OpError as err:
            return self.failure(target, err, action="supersede")
        except WriteRefused as refused:
            return refused.result

    # The dashboard addresses entries by position; `expected` (the text the page showed) guards
    # against editing an entry that changed on disk since the page was rendered.
    def add_entry(self, target: str, text: str, prov: Provenance) -> Result:
        return self.add(target, text, prov)

    def edit_entry(
        self, target: str, index: int, new_text: str, prov: Provenance, expected: str | None = None
    ) -> Result:
        ops = [{"action": "replace", "content": new_text}]
        try:
            parsed = parse_operations(ops, index=index, expected=expected, limit=self.limit(target))
        except OpError as err:
            return self._error(self.spec(target), "replace", err)
        try:
            return self._mutate(self.spec(target), parsed, prov, "replace")
        except WriteRefused as refused:
            return refused.result

    def check_entry(self, target: str, text: str, index: int | None = None, expected: str | None = None) -> Outcome:
        """What `add_entry` (no index) or `edit_entry` would do to the file as it is now, without
        writing: the same checks (empty, threat scan, changed entry, limit), raised as OpError."""
        action = "add" if index is None else "replace"
        ops = parse_operations([{"action": action, "content": text}], index=index, expected=expected)
        return apply_ops(self.spec(target), self.entries(target), ops, self.limit(target))

    def check(self, target: str, operations: Sequence[Any]) -> Outcome:
        """What `write` would do to the file as it is now, without writing: the same checks
        (arguments, threat scan, the entry to change, limit, and an edit made outside the
        dashboard to the entries it would change), raised as OpError. An outside edit is logged,
        as a write logs it first, so the next check or write of the same change goes ahead: a
        change of two files (a merge) can be checked whole before either is written."""
        spec, limit = self.spec(target), self.limit(target)
        with self._locked(spec) as path:
            raw, existed, _ = _read(path)
            outside = self._sync_external(spec, raw, existed)  # first: whatever else is refused
            ops = parse_operations(operations, limit=limit)
            return apply_ops(spec, parse(raw), ops, limit, frozenset(outside))

    def delete_entry(self, target: str, index: int, prov: Provenance, expected: str | None = None) -> Result:
        parsed = [Op(action="remove", index=index, expected=expected)]
        try:
            return self._mutate(self.spec(target), parsed, prov, "remove")
        except WriteRefused as refused:
            return refused.result

    def restore(self, change: KnowledgeChange, prov: Provenance) -> KnowledgeChange:
        """Write `change.before` back byte-exactly (the undo of kind "memory", knowledge/undo.py)."""
        spec = self.spec(change.target)
        with self._locked(spec) as path:
            raw, existed, _ = _read(path)
            outside = self._sync_external(spec, raw, existed)
            kept = set(parse(change.before)) if change.existed_before else set()
            backup = _backup(path) if outside - kept else None  # the undo would drop someone else's text
            if change.existed_before:
                atomic_write(path, change.before, through_link=True)
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
                summary=f"Undo of change #{change.pk} ({change.action} by {change.actor})"
                + (f"; text written outside the dashboard was saved to {backup.name}" if backup else ""),
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

    def _mutate(self, spec: TargetSpec, ops: list[Op], prov: Provenance, action: str, summary: str = "") -> Result:
        limit = self.limit(spec.name)
        with self._locked(spec) as path:
            raw, existed, lossy = _read(path)
            outside = self._sync_external(spec, raw, existed)
            current = parse(raw)
            try:
                outcome = apply_ops(spec, current, ops, limit, frozenset(outside))
            except OpError as err:
                if err.kind == "drift":
                    err.extra["backup"] = str(_backup(path))
                raise WriteRefused(self._error(spec, action, err, current, limit), err.kind) from err
            # `done` as Hermes sends it: the write is complete and must not be repeated.
            result: Result = {
                "success": True,
                "done": True,
                "changed": outcome.changed,
                "target": spec.name,
                "action": action,
            }
            if outcome.changed:
                result["message"] = spec.updated_message
                try:
                    if summary:
                        outcome = dataclasses.replace(outcome, summary=summary)
                    result.update(self._commit(spec, path, raw, existed, lossy, outcome, prov, action))
                except OSError as exc:
                    # Disk full, quota, read-only folder: the atomic write left the old file
                    # intact, so say plainly that nothing was saved.
                    refusal = {
                        "success": False,
                        "error": f"Could not save {spec.filename}: {exc.strerror or exc}. Nothing was changed.",
                        "target": spec.name,
                    }
                    raise WriteRefused(refusal, "disk") from exc
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
        atomic_write(path, new_raw, through_link=True)
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

    def _sync_external(self, spec: TargetSpec, raw: str, existed: bool) -> set[str]:
        """Log an edit made outside this store (by hand, by Hermes) before changing the file.

        Returns the entries that edit brought (new or changed since the store last wrote or
        logged the file): the drift a blind replace/remove must not erase. Logging it makes the
        store's view current, so a retry after the model has seen current_entries goes ahead.
        """
        last = KnowledgeChange.objects.filter(kind="memory", target=spec.name).order_by("-id").first()
        if last is None or (last.after, last.exists_after) == (raw, existed):
            return set()
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
        return set(parse(raw)) - set(parse(last.after if last.exists_after else ""))

    def _error(
        self, spec: TargetSpec, action: str, err: OpError, current: list[str] | None = None, limit: int | None = None
    ) -> Result:
        result: Result = {"success": False, "error": err.message, "target": spec.name, "action": action}
        if current is not None and limit is not None:
            result["usage"] = format_usage(len(serialise(current)), limit)
            if err.show_entries:
                # Masked: a poisoned entry must not reach the model through an error either.
                result["current_entries"] = mask_entries(current)
        result.update(err.extra)
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
