"""MemoryStore in a home shared with Hermes Agent or edited by hand:
outside text is never lost, a symlinked MEMORY.md stays a link, and the tool speaks Hermes' contract."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent.tools.memory_tool import memory_tool
from agent.tools.registry import ToolContext
from knowledge import undo as knowledge_undo
from knowledge.memory.store import MemoryStore
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance
from tests.conftest import write_config

AGENT = Provenance(actor="agent")
pytestmark = pytest.mark.django_db

# About 2.4 KB, as in the report: what Hermes (or a person) appended while the dashboard ran.
HERMES_ENTRY = "Hermes: the user's servers are named after moons; " + "Europa runs staging, Io runs CI. " * 70
HAND_NOTE = "Remember: the VPN must be up before deploying"


def call(args: dict, ctx: ToolContext | None = None) -> dict:
    return json.loads(memory_tool().handler(args, ctx or ToolContext()).content())


@pytest.fixture
def memory_file(home: Path) -> Path:
    write_config(home, "memory:\n  memory_char_limit: 6000\n")
    store = MemoryStore()
    assert store.add("memory", "Project uses uv", AGENT)["success"]
    assert store.add("memory", "Deploy with make deploy", AGENT)["success"]
    path = home / "memories" / "MEMORY.md"
    # Outside writers: Hermes appends a whole entry; a person appends a line to the last entry.
    with path.open("a", encoding="utf-8") as fh:
        fh.write(f"\n§\n{HERMES_ENTRY}\n{HAND_NOTE}\n")
    return path


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.bak.*"))


def test_blind_replace_of_an_entry_changed_outside_is_refused_and_backed_up(memory_file: Path) -> None:
    before = memory_file.read_text(encoding="utf-8")
    result = call({"target": "memory", "action": "replace", "old_text": "Europa", "content": "Servers: moons"})
    assert result["success"] is False and "changed outside" in result["error"]
    assert memory_file.read_text(encoding="utf-8") == before  # nothing written
    (backup,) = _backups(memory_file)
    assert result["backup"] == str(backup) and backup.read_text(encoding="utf-8") == before
    assert any(HAND_NOTE in e for e in result["current_entries"])  # the model now sees the outside text
    # Having seen it, the model may go ahead: the retry is applied.
    again = call({"target": "memory", "action": "replace", "old_text": "Europa", "content": "Servers: moons"})
    assert again["success"] is True and again["done"] is True
    assert HAND_NOTE in backup.read_text(encoding="utf-8")


def test_adds_merge_outside_entries_and_keep_every_byte_of_them(memory_file: Path) -> None:
    assert call({"target": "memory", "action": "add", "content": "Tests run with pytest"})["success"]
    text = memory_file.read_text(encoding="utf-8")
    assert HERMES_ENTRY.strip() in text and HAND_NOTE in text and text.endswith("Tests run with pytest")
    store = MemoryStore()
    # Entries the store itself wrote stay editable without a detour.
    assert store.replace("memory", "Project uses uv", "Project uses uv and ruff", AGENT)["success"]
    assert not _backups(memory_file)


def test_undo_that_would_drop_outside_text_writes_a_backup_first(memory_file: Path) -> None:
    outside = memory_file.read_text(encoding="utf-8")
    first = KnowledgeChange.objects.filter(kind="memory").order_by("id").first()
    assert first is not None
    undo = knowledge_undo.undo(first)
    assert undo is not None and "saved to MEMORY.md.bak." in undo.summary
    (backup,) = _backups(memory_file)
    assert backup.read_text(encoding="utf-8") == outside


def test_symlinked_memory_file_is_written_through_the_link(home: Path, tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "MEMORY.md"
    real.write_text("from my dotfiles", encoding="utf-8")
    link = home / "memories" / "MEMORY.md"
    link.parent.mkdir(parents=True)
    link.symlink_to(real)
    store = MemoryStore()
    assert store.add("memory", "added by the agent", AGENT)["success"]
    assert store.replace("memory", "added by", "edited by the agent", AGENT)["success"]
    assert link.is_symlink() and link.resolve() == real.resolve()
    assert real.read_text(encoding="utf-8") == "from my dotfiles\n§\nedited by the agent"
    knowledge_undo.undo(KnowledgeChange.objects.order_by("-id").first())  # undo writes through it too
    assert link.is_symlink() and "added by the agent" in real.read_text(encoding="utf-8")


# --- Hermes' tool contract -----------------------------------------------------------------------


def test_null_or_missing_target_means_memory(home: Path) -> None:
    assert call({"target": None, "action": "add", "content": "a note"})["target"] == "memory"
    assert call({"action": "add", "content": "another"})["target"] == "memory"
    assert MemoryStore().entries("memory") == ["a note", "another"]
    assert "'target' is required" in call({"target": "notes", "action": "add", "content": "x"})["error"]


def test_missing_old_text_returns_current_entries_and_usage(home: Path) -> None:
    call({"target": "user", "action": "add", "content": "Prefers tea"})
    result = call({"target": "user", "action": "remove"})
    assert result["success"] is False and "needs 'old_text'" in result["error"]
    assert result["current_entries"] == ["Prefers tea"] and result["usage"] == "1% — 11/1375 chars"


def test_success_carries_done_and_the_cap_degrades_on_the_fourth_failure(home: Path) -> None:
    ctx = ToolContext()
    assert call({"target": "memory", "action": "add", "content": "x"}, ctx)["done"] is True
    failures = [call({"target": "memory", "action": "remove", "old_text": f"no{i}"}, ctx) for i in range(4)]
    assert [f.get("done", False) for f in failures] == [False, False, False, True]
    assert "Stop retrying" in failures[3]["error"]
