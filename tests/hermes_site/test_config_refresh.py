"""Each process follows config.yaml: re-read when the file changes (checked with one stat at the
start of a request, turn or job), the last good settings kept while the file is wrong."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from foundation import config as hermes_config
from foundation.config import ConfigError


@pytest.fixture
def own_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("HERMES_HOME", str(tmp_path))
    hermes_config.reset()
    yield tmp_path
    hermes_config.reset()


def _write_in_place(path: Path, text: str, *, bump_ns: int = 0) -> None:
    """An edit by hand: the same file (inode), new text; `bump_ns` moves its mtime on."""
    before = path.stat()
    with path.open("r+", encoding="utf-8") as out:
        out.truncate(0)
        out.write(text)
    if bump_ns:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + bump_ns))


def test_an_edit_is_seen_at_the_next_refresh_and_not_before(own_home: Path) -> None:
    path = own_home / "config.yaml"
    path.write_text("memory:\n  nudge_interval: 3\n")
    first = hermes_config.get()
    assert first.memory.nudge_interval == 3
    _write_in_place(path, "memory:\n  nudge_interval: 4\n", bump_ns=1_000_000_000)  # same size: the mtime tells
    assert hermes_config.get() is first  # a turn holds the settings it started with
    assert hermes_config.refresh().memory.nudge_interval == 4
    assert hermes_config.get().memory.nudge_interval == 4


def test_an_unchanged_file_is_not_read_again(own_home: Path) -> None:
    (own_home / "config.yaml").write_text("memory:\n  nudge_interval: 3\n")
    first = hermes_config.refresh()
    assert hermes_config.refresh() is first


def test_a_file_replaced_with_the_same_size_and_times_is_read_again(own_home: Path) -> None:
    path = own_home / "config.yaml"
    path.write_text("memory:\n  nudge_interval: 3\n")
    assert hermes_config.get().memory.nudge_interval == 3
    times = path.stat()
    new = own_home / "new.yaml"
    new.write_text("memory:\n  nudge_interval: 5\n")
    os.utime(new, ns=(times.st_atime_ns, times.st_mtime_ns))
    os.replace(new, path)  # as a save on another worker does: a new inode
    assert hermes_config.refresh().memory.nudge_interval == 5


def test_a_save_in_this_process_is_followed_at_once(own_home: Path) -> None:
    hermes_config.get()
    saved = hermes_config.save_changes({"memory.nudge_interval": 2})
    assert hermes_config.get() is saved and saved.memory.nudge_interval == 2


def test_a_wrong_value_keeps_the_last_good_config_and_logs_the_key_once(
    own_home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = own_home / "config.yaml"
    path.write_text("memory:\n  nudge_interval: 3\n")
    good = hermes_config.get()
    _write_in_place(path, "memory:\n  nudge_interval: lots\n")
    with caplog.at_level(logging.ERROR, logger="foundation.config"):
        assert hermes_config.refresh() is good
        assert hermes_config.refresh() is good
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1, errors
    assert "memory.nudge_interval must be a whole number >= 0, got 'lots'" in errors[0]
    assert "settings read before stay in use" in errors[0]
    _write_in_place(path, "memory:\n  nudge_interval: 7\n")  # fixed
    assert hermes_config.refresh().memory.nudge_interval == 7


def test_a_wrong_file_with_nothing_good_to_keep_raises_naming_the_key(own_home: Path) -> None:
    (own_home / "config.yaml").write_text("compression:\n  threshold: 3\n")
    with pytest.raises(ConfigError) as err:
        hermes_config.get()
    assert err.value.key == "compression.threshold"


def test_a_removed_file_means_the_defaults(own_home: Path) -> None:
    path = own_home / "config.yaml"
    path.write_text("memory:\n  nudge_interval: 3\n")
    assert hermes_config.get().memory.nudge_interval == 3
    path.unlink()
    assert hermes_config.refresh().memory.nudge_interval == 10
    assert not path.exists()  # reading never writes
