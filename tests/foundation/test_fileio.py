"""Durable writes: a reader sees the old file or the new one, never a mix; a failed write leaves
the target and no temp files behind."""

from __future__ import annotations

import stat
import threading
from pathlib import Path

import pytest

from foundation.fileio import atomic_write, fsync_dir


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_writes_text_and_bytes_creating_folders_private_by_default(tmp_path: Path):
    target = tmp_path / "a" / "b" / "MEMORY.md"
    atomic_write(target, "héllo §")
    assert target.read_text(encoding="utf-8") == "héllo §"
    assert _mode(target) == 0o600
    atomic_write(target, b"\x00\x01", mode=0o644)
    assert target.read_bytes() == b"\x00\x01" and _mode(target) == 0o644
    assert sorted(p.name for p in target.parent.iterdir()) == ["MEMORY.md"]


def test_a_reader_never_sees_a_half_written_file(tmp_path: Path):
    target = tmp_path / "f.txt"
    versions = (b"A" * 200_000, b"B" * 200_000)
    atomic_write(target, versions[0])
    done = threading.Event()
    seen: set[bytes] = set()

    def writer() -> None:
        for i in range(60):
            atomic_write(target, versions[i % 2])
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    while not done.is_set():
        seen.add(target.read_bytes())
    thread.join()
    assert seen <= set(versions)


def test_a_failed_replace_keeps_the_target_and_leaves_no_temp_file(tmp_path: Path):
    target = tmp_path / "skill"
    target.mkdir()
    (target / "SKILL.md").write_text("keep me")
    with pytest.raises(OSError):
        atomic_write(target, "would replace a folder")
    assert (target / "SKILL.md").read_text() == "keep me"
    assert [p.name for p in tmp_path.iterdir()] == ["skill"]


def test_fsync_dir_needs_an_existing_folder(tmp_path: Path):
    fsync_dir(tmp_path)
    with pytest.raises(FileNotFoundError):
        fsync_dir(tmp_path / "missing")


def test_create_private_is_0600_whatever_the_umask_and_never_replaces(tmp_path):
    import os
    import stat

    from foundation.fileio import create_private

    old = os.umask(0)
    try:
        assert create_private(tmp_path / "token", "first") is True
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "token").stat().st_mode) == 0o600
    assert create_private(tmp_path / "token", "second") is False
    assert (tmp_path / "token").read_text() == "first"
    assert [p.name for p in tmp_path.iterdir()] == ["token"]  # no temp file left behind
