"""Undo of skill changes: one change, a deleted folder, everything a review did."""

from __future__ import annotations

from pathlib import Path

import pytest

from foundation import config as hermes_config
from knowledge import undo as knowledge_undo
from knowledge.models import KnowledgeChange
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore
from tests.knowledge.skills.helpers import skill_md


@pytest.fixture
def store(home: Path) -> SkillStore:
    return SkillStore(hermes_config.get())


# ----- delete and undo ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_delete_records_each_file_and_undo_restores_the_folder(store: SkillStore, home: Path) -> None:
    store.create("deploy", skill_md("deploy"), category="ops")
    store.write_file("deploy", "references/a.md", "A")
    store.write_file("deploy", "scripts/run.sh", "#!/bin/sh\necho hi\n")
    binary = home / "skills" / "ops" / "deploy" / "assets" / "logo.png"
    binary.parent.mkdir()
    binary.write_bytes(b"\x89PNG\xff\x00\x01")
    store.delete("deploy", prov=Provenance(actor="agent"))
    assert not (home / "skills" / "ops").exists()
    assert (home / "skills").is_dir()  # the root is never removed
    assert store.list() == []
    deleted = KnowledgeChange.objects.filter(action="delete")
    assert sorted(c.path for c in deleted) == [
        "ops/deploy/SKILL.md",
        "ops/deploy/assets/logo.png",
        "ops/deploy/references/a.md",
        "ops/deploy/scripts/run.sh",
    ]
    assert all(not c.exists_after and c.actor == "agent" for c in deleted)

    undone = knowledge_undo.undo(deleted.get(path="ops/deploy/references/a.md"))
    assert undone is not None and undone.actor == "undo" and undone.undoes is not None
    folder = home / "skills" / "ops" / "deploy"
    assert (folder / "SKILL.md").read_text() == skill_md("deploy")
    assert (folder / "references" / "a.md").read_text() == "A"
    assert (folder / "scripts" / "run.sh").read_text() == "#!/bin/sh\necho hi\n"
    assert binary.read_bytes() == b"\x89PNG\xff\x00\x01"
    assert [s.name for s in store.available()] == ["deploy"]
    assert KnowledgeChange.objects.filter(action="undo").count() == 4
    # undoing another file of the same delete finds everything restored already
    assert knowledge_undo.undo(deleted.get(path="ops/deploy/SKILL.md")) is None


@pytest.mark.django_db
def test_undo_of_create_and_edit(store: SkillStore, home: Path) -> None:
    store.create("deploy", skill_md("deploy"))
    store.edit("deploy", skill_md("deploy", body="v2\n"))
    knowledge_undo.undo(KnowledgeChange.objects.get(action="edit"))
    assert (home / "skills" / "deploy" / "SKILL.md").read_text() == skill_md("deploy")
    knowledge_undo.undo(KnowledgeChange.objects.get(action="create"))
    assert not (home / "skills" / "deploy").exists()
    assert store.list() == []


@pytest.mark.django_db
def test_undo_review_reverts_everything_a_review_did(store: SkillStore, home: Path) -> None:
    from knowledge.models import ReviewRun

    run = ReviewRun.objects.create(prompt_kind="skill")
    prov = Provenance(actor="review", review_id=run.pk)
    store.create("deploy", skill_md("deploy"), prov=prov)
    store.write_file("deploy", "references/a.md", "A", prov=prov)
    store.patch("deploy", "Do it.", "Do it twice.", prov=prov)
    knowledge_undo.undo_review(run.pk)
    assert not (home / "skills" / "deploy").exists()


@pytest.mark.django_db
def test_undo_of_write_file_deletes_a_new_file(store: SkillStore) -> None:
    store.create("deploy", skill_md("deploy"))
    path = store.write_file("deploy", "templates/t.txt", "T")
    knowledge_undo.undo(KnowledgeChange.objects.get(action="write_file"))
    assert not path.exists()
    assert store.files("deploy") == []
