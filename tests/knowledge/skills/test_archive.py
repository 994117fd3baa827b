"""Archived skills: a folder moved whole into skills/.archive/ (Hermes Agent's layout), out of
every listing, back where it was on restore, each move one change that undo reverses."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundation import config as hermes_config
from knowledge import undo as knowledge_undo
from knowledge.models import KnowledgeChange, SkillUsage
from knowledge.prompt import build_system_prompt
from knowledge.provenance import Provenance
from knowledge.skills import archive
from knowledge.skills.format import SkillError
from knowledge.skills.store import SkillStore
from tests.knowledge.skills.helpers import skill_md

pytestmark = pytest.mark.django_db
PERSON = Provenance(actor="user")


@pytest.fixture
def store(home: Path) -> SkillStore:
    return SkillStore(hermes_config.get())


def test_the_archive_folder_is_not_a_skill_anywhere(store: SkillStore, home: Path) -> None:
    store.create("brew-coffee", skill_md("brew-coffee"))
    store.create("rotate-logs", skill_md("rotate-logs", "Rotate logs"), category="ops")
    store.write_file("rotate-logs", "scripts/rotate.sh", "logrotate -f\n")
    change = archive.archive(store, "rotate-logs", PERSON, why="unused")
    assert (change.action, change.before, change.after) == ("archive", "ops/rotate-logs", ".archive/rotate-logs")
    assert (home / "skills" / ".archive" / "rotate-logs" / "scripts" / "rotate.sh").read_text() == "logrotate -f\n"
    assert not (home / "skills" / "ops").exists()  # the emptied category goes
    assert [s.name for s in store.list()] == ["brew-coffee"]
    assert "rotate-logs" not in build_system_prompt(hermes_config.get())
    assert SkillUsage.objects.get(name="rotate-logs").archived_at is not None
    [listed] = archive.archived(store)
    assert (listed.name, listed.was, listed.description) == ("rotate-logs", "ops/rotate-logs", "Rotate logs")


def test_a_second_archive_of_one_name_keeps_the_first(store: SkillStore) -> None:
    store.create("rotate-logs", skill_md("rotate-logs", "Rotate logs"), category="ops")
    archive.archive(store, "rotate-logs", PERSON)
    store.create("rotate-logs", skill_md("rotate-logs", "Rotate logs again"))
    archive.archive(store, "rotate-logs", PERSON)
    assert sorted(a.folder for a in archive.archived(store)) == ["rotate-logs", "rotate-logs-2"]
    restored = archive.restore(store, "rotate-logs", PERSON)
    assert restored.action == "restore" and store.get("rotate-logs").category == "ops"
    assert SkillUsage.objects.get(name="rotate-logs").archived_at is None
    with pytest.raises(SkillError, match="exists again"):
        archive.restore(store, "rotate-logs-2", PERSON)
    with pytest.raises(SkillError, match="no archived skill"):
        archive.restore(store, "never-was", PERSON)


def test_undo_moves_it_back_and_undoing_the_undo_archives_it_again(store: SkillStore, home: Path) -> None:
    store.create("brew-coffee", skill_md("brew-coffee"))
    change = archive.archive(store, "brew-coffee", PERSON)
    back = knowledge_undo.undo(change)
    assert back is not None and back.action == "restore" and back.undoes_id == change.pk
    assert (home / "skills" / "brew-coffee" / "SKILL.md").is_file()
    again = knowledge_undo.undo(back)
    assert again is not None and again.action == "archive"
    assert (home / "skills" / ".archive" / "brew-coffee" / "SKILL.md").is_file()
    # Restored by hand since: undoing the first archive finds it back already.
    archive.restore(store, "brew-coffee", PERSON)
    assert knowledge_undo.undo(change) is None
    assert KnowledgeChange.objects.filter(target="brew-coffee", action__in=("archive", "restore")).count() == 4
