"""Export everything as one archive: memories, skills, sessions and messages, in a
layout that imports back as a Hermes home (knowledge/transfer/hermes_import.py reads it)."""

from __future__ import annotations

import io
import json
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from django.utils import timezone

from knowledge.memory.store import TARGETS, MemoryStore
from knowledge.models import ChatSession, Message
from knowledge.skills.store import LOCK_FILE, SkillStore
from knowledge.transfer.hermes_import import TransferError

EXPORT_ROOT = "hermes-export"


def _session_row(s: ChatSession) -> dict[str, Any]:
    fields = (
        "id", "name", "title", "source", "model", "system_prompt", "leaf_id", "end_reason", "user_turn_count",
        "message_count", "tool_call_count", "prompt_tokens", "completion_tokens", "compression_count",
    )  # fmt: skip
    row: dict[str, Any] = {f: getattr(s, f) for f in fields}
    for f in ("started_at", "updated_at", "ended_at"):
        value = getattr(s, f)
        row[f] = value.isoformat() if value else None
    return row


def _message_row(m: Message) -> dict[str, Any]:
    return {
        "id": m.pk,
        "session_id": m.session_id,
        "parent_id": m.parent_id,  # the message it follows: versions of a turn share one
        "role": m.role,
        "content": m.content,
        "tool_calls": m.tool_calls,
        "tool_call_id": m.tool_call_id,
        "tool_name": m.tool_name,
        "created_at": m.created_at.isoformat() if m.created_at else None,
        "token_count": m.token_count,
        "finish_reason": m.finish_reason,
    }


def _add_jsonl(tar: tarfile.TarFile, arcname: str, rows: Iterator[dict[str, Any]]) -> int:
    count = 0
    with tempfile.TemporaryFile() as buf:
        for row in rows:
            buf.write(json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n")
            count += 1
        info = tarfile.TarInfo(arcname)
        info.size = buf.tell()
        info.mtime = int(time.time())
        buf.seek(0)
        tar.addfile(info, buf)
    return count


def _add_tree(tar: tarfile.TarFile, folder: Path, arcname: str) -> None:
    """Regular files only: links are left out so an export never carries files from elsewhere."""
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        dirnames[:] = sorted(d for d in dirnames if not Path(dirpath, d).is_symlink())
        for fn in sorted(filenames):
            path = Path(dirpath, fn)
            if fn == LOCK_FILE or fn.endswith((".lock", ".tmp")) or path.is_symlink() or not path.is_file():
                continue
            tar.add(path, arcname=f"{arcname}/{path.relative_to(folder).as_posix()}", recursive=False)


# "wrapped": everything under hermes-export/ (safe to unpack anywhere). "home": a Hermes home's
# own shape, memories/ and skills/ at the top, to unpack straight into ~/.hermes; the dashboard's
# sessions then sit in dashboard-export/ so they do not scatter over the home.
LAYOUTS = ("wrapped", "home")


def _export_paths(layout: str) -> tuple[str, str]:
    """(prefix of memories/ and skills/, prefix of the session files)."""
    if layout not in LAYOUTS:
        raise TransferError(f"Unknown export layout {layout!r}: use {' or '.join(LAYOUTS)}.")
    return (f"{EXPORT_ROOT}/", f"{EXPORT_ROOT}/") if layout == "wrapped" else ("", "dashboard-export/")


def export_archive(out: IO[bytes], layout: str = "wrapped") -> dict[str, int]:
    """Write memories, skills, sessions.jsonl and messages.jsonl as a .tar.gz to `out`.

    Both layouts hold a Hermes home (memories/, skills/), so either archive imports back as is.
    """
    home_prefix, data_prefix = _export_paths(layout)
    store = MemoryStore()
    skills_root = SkillStore().root
    counts: dict[str, int] = {}
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for target in TARGETS:
            path = store.path(target)
            if path.is_file():  # a symlinked memory file (dotfiles) is exported as its content
                tar.add(path.resolve(), arcname=f"{home_prefix}memories/{path.name}", recursive=False)
        _add_tree(tar, skills_root, f"{home_prefix}skills")
        sessions = ChatSession.objects.order_by("started_at", "id").iterator()
        counts["sessions"] = _add_jsonl(tar, f"{data_prefix}sessions.jsonl", (_session_row(s) for s in sessions))
        messages = Message.objects.order_by("id").iterator(chunk_size=2000)
        counts["messages"] = _add_jsonl(tar, f"{data_prefix}messages.jsonl", (_message_row(m) for m in messages))
        manifest = json.dumps({"format": "hermes-dashboard-export", "version": 1, "layout": layout,
                               "exported_at": timezone.now().isoformat(), **counts}, indent=2).encode()  # fmt: skip
        info = tarfile.TarInfo(f"{data_prefix}manifest.json")
        info.size, info.mtime = len(manifest), int(time.time())
        tar.addfile(info, io.BytesIO(manifest))
    return counts


def export_filename() -> str:
    return f"hermes-export-{timezone.now().strftime('%Y%m%d-%H%M%S')}.tar.gz"


def export_to_path(dest: Path, layout: str = "wrapped") -> dict[str, int]:
    _export_paths(layout)  # an unknown layout is refused before any file is created
    tmp = dest.with_name(dest.name + ".partial")
    try:
        with tmp.open("wb") as fh:
            counts = export_archive(fh, layout)
        shutil.move(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    return counts
