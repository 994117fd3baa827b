"""`manage.py export_hermes OUT`: the archive holds memories, skills and sessions, and imports
back into an empty home as it was."""

from __future__ import annotations

import io
import json
import shutil
import tarfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, Message
from knowledge.provenance import Provenance
from knowledge.skills.store import SkillStore

pytestmark = pytest.mark.django_db

SKILL = "---\nname: git-bisect\ndescription: Find the commit that broke a test\n---\n\n# Bisect\n\nRun git bisect.\n"


def _fill(home: Path) -> None:
    store = MemoryStore()
    store.add("memory", "Project uses Python 3.11", Provenance(actor="user"))
    store.add("user", "Name: Ada", Provenance(actor="user"))
    SkillStore().create("git-bisect", SKILL, category="devops", prov=Provenance(actor="user"))
    s = ChatSession.objects.create(title="Bisecting", source="cli")
    Message.objects.create(session=s, role="user", content="which commit broke it?")


def _members(path: Path) -> dict[str, bytes]:
    with tarfile.open(path, mode="r:gz") as tar:
        return {m.name.split("/", 1)[1]: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_export_then_import_into_an_empty_home_round_trips(home: Path, tmp_path: Path, capsys):
    _fill(home)
    out = tmp_path / "backup.tar.gz"
    call_command("export_hermes", str(out))
    assert capsys.readouterr().out.strip() == f"Wrote {out}: 1 sessions, 1 messages."
    members = _members(out)
    assert members["memories/USER.md"] == b"Name: Ada"
    assert json.loads(members["sessions.jsonl"].splitlines()[0])["title"] == "Bisecting"
    assert b"which commit broke it?" in members["messages.jsonl"]
    assert not any(name.endswith((".lock", ".tmp", ".partial")) for name in members)
    before = {
        p: (home / p).read_bytes()
        for p in ("memories/MEMORY.md", "memories/USER.md", "skills/devops/git-bisect/SKILL.md")
    }
    # A new home: nothing learned yet.
    shutil.rmtree(home / "memories")
    shutil.rmtree(home / "skills")
    call_command("import_hermes", str(out))
    assert "Import #" in capsys.readouterr().out
    assert {p: (home / p).read_bytes() for p in before} == before


def test_export_into_a_missing_folder_is_a_clear_error(home: Path, tmp_path: Path):
    with pytest.raises(CommandError, match="does not exist"):
        call_command("export_hermes", str(tmp_path / "nope" / "out.tar.gz"))
    assert not (tmp_path / "nope").exists()


def test_an_existing_folder_as_out_is_refused_clearly(home: Path, tmp_path: Path):
    folder = tmp_path / "backups"
    folder.mkdir()
    with pytest.raises(CommandError, match="is a folder; give the archive's file name"):
        call_command("export_hermes", str(folder), stdout=io.StringIO())
    assert list(folder.iterdir()) == []


def test_an_empty_home_exports_an_archive_with_no_sessions(home: Path, tmp_path: Path):
    out = tmp_path / "empty.tar.gz"
    call_command("export_hermes", str(out), stdout=io.StringIO())
    members = _members(out)
    assert json.loads(members["manifest.json"])["sessions"] == 0
    assert members["sessions.jsonl"] == b""
