"""Pure memory operations (docs/BEHAVIOUR.md, Memory): the file format, the limits, add/replace/remove on a list
of entries, and the threat masking for the prompt. No I/O here: `knowledge.memory.store`
owns the files, the lock and the change log, and applies what these functions decide."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from knowledge.verification.threat_scan import MAX_SCAN_CHARS, ThreatHit, scan, scan_all_long

ENTRY_DELIMITER = "\n§\n"
PREVIEW_CHARS = 80
ACTIONS = ("add", "replace", "remove")
Result = dict[str, Any]

RULE = "═" * 46


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


@dataclass(frozen=True)
class Overflow:
    """The figures of a write refused for the limit, so a page can word it for a person."""

    before: int  # characters the file held
    added: int  # characters the new content brings
    after: int  # what the file would hold
    limit: int


class OpError(Exception):
    """A rejected operation; `kind` says what went wrong (the memory tool counts some kinds per turn),
    `extra` joins the result."""

    def __init__(
        self,
        message: str,
        kind: str = "invalid",
        show_entries: bool = False,
        overflow: Overflow | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind
        self.show_entries = show_entries
        self.overflow = overflow
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


def parse_operations(
    operations: Sequence[Any], index: int | None = None, expected: str | None = None, limit: int | None = None
) -> list[Op]:
    """Validate and threat-scan every operation before anything is locked or written.

    With `limit` (the target's character limit), content that could never fit is refused before
    it is scanned: the size check is the cheap one, and a huge text must not cost a scan."""
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
            raise OpError(
                f"{prefix}'{action}' needs 'old_text': a short substring that identifies the entry (see "
                "current_entries).",
                kind="missing_old_text",
                show_entries=True,
            )
        if limit is not None and len(content) > limit:
            raise OpError(
                f"{prefix}the content is {len(content):,} chars, more than the whole limit of {limit:,} chars. "
                "Nothing was saved; shorten it.",
                kind="overflow",
            )
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


def _locate(spec: TargetSpec, entries: list[str], op: Op, where: str, outside: frozenset[str]) -> int:
    idx = _find(spec, entries, op, where)
    # A dashboard edit names the entry by position and the exact text the page showed (checked
    # in _find), so the person saw any outside text; the guard is for blind substring matches.
    if op.index is None and entries[idx] in outside:
        # Hermes' drift guard: text another writer put there since this store last saw the file is
        # not replaced or removed blind; the caller backs the file up, the model re-reads and retries.
        raise OpError(
            f"{where}{spec.filename} changed outside this store since it was last read (by hand or by another agent), "
            f"and the entry matching your request is part of that change: {preview(entries[idx])!r}. Nothing was "
            "saved. Read current_entries and retry if you still mean to change it.",
            kind="drift",
            show_entries=True,
        )
    return idx


def _find(spec: TargetSpec, entries: list[str], op: Op, where: str) -> int:
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


def apply_ops(
    spec: TargetSpec, current: list[str], ops: Sequence[Op], limit: int, outside: frozenset[str] = frozenset()
) -> Outcome:
    """Apply `ops` to a copy of `current`; raise OpError (nothing applied) on any failure.

    `outside` holds entries written by someone else since the store last saw the file: they may
    be kept and added to, not replaced or removed without the writer seeing them first."""
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
        idx = _locate(spec, entries, op, where, outside)
        if op.action == "remove":
            summaries.append(f"remove: {preview(entries[idx])}")
            del entries[idx]
        elif entries[idx] != op.content:
            summaries.append(f"replace: {preview(entries[idx])} -> {preview(op.content)}")
            entries[idx] = op.content
            new_chars += len(op.content)
            entries = parse(serialise(entries))  # replacing with another entry's text merges the two
    changed = entries != current
    if changed:
        _refuse_new_combined_threat(current, entries)
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
            overflow=Overflow(before=before_chars, added=new_chars, after=after_chars, limit=limit),
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


# A split instruction works because the model reads neighbouring entries as one text, so entries
# are read together in runs of up to this many neighbours. Reading the whole memory as one text
# instead lets the long-gap patterns join words from entries far apart ("cat" in one note, ".env"
# in another twenty notes later) and refuses ordinary notes; it also cost a scan per entry of the
# whole memory.
JOIN_WINDOW = 3


def _joined_hits(entries: Sequence[str]) -> dict[tuple[str, tuple[int, ...]], ThreatHit]:
    """Threats that only neighbouring clean entries make together, keyed by pattern and entry indices.

    A run of entries counts only for what none of its shorter runs already says, so each joined
    threat is pinned to the fewest neighbours that make it."""
    clean = [i for i, e in enumerate(entries) if entry_threat(e) is None]
    found: dict[tuple[str, tuple[int, ...]], ThreatHit] = {}
    for size in range(2, JOIN_WINDOW + 1):
        for start in range(len(clean) - size + 1):
            run = tuple(clean[start : start + size])
            for hit in scan_all_long(" ".join(entries[i] for i in run)):
                inner = any(hid == hit.id and set(idx) < set(run) for hid, idx in found)
                if not inner:
                    found[(hit.id, run)] = hit
    return found


def _refuse_new_combined_threat(current: Sequence[str], entries: Sequence[str]) -> None:
    """An instruction split across entries is caught when its last part is written."""
    before = {(hid, tuple(current[i] for i in run)) for hid, run in _joined_hits(current)}
    new = [
        hit for (hid, run), hit in _joined_hits(entries).items() if (hid, tuple(entries[i] for i in run)) not in before
    ]
    if new:
        raise OpError(
            f"Blocked: read together with the entries already saved, the content matches threat pattern "
            f"'{new[0].id}': {new[0].reason}. Nothing was saved.",
            kind="blocked",
            threat=new[0].id,
        )


def combined_flags(entries: Sequence[str]) -> dict[int, ThreatHit]:
    """Entries that are clean alone but form a threat with their neighbours (by index)."""
    flags: dict[int, ThreatHit] = {}
    for (hid, run), hit in _joined_hits(entries).items():
        joined_hit = ThreatHit(id=hid, reason=f"read together with the entries beside it, {hit.reason}")
        for i in run:
            flags.setdefault(i, joined_hit)
    return flags


def entry_flags(entries: Sequence[str]) -> list[ThreatHit | None]:
    """Each entry's threat, alone or read together with the others."""
    combined = combined_flags(entries)
    return [entry_threat(entry) or combined.get(i) for i, entry in enumerate(entries)]


def mask_entries(entries: Sequence[str]) -> list[str]:
    """Entries as they may be shown to a model: blocked ones replaced by a placeholder."""
    out = []
    for entry, hit in zip(entries, entry_flags(entries), strict=True):
        out.append(entry if hit is None else f"[BLOCKED: {hit.reason} ({hit.id})]")
    return out
