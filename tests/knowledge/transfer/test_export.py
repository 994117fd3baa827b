"""The export archive (knowledge/transfer/export.py): its contents, both layouts, and that it imports back."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from knowledge.memory.store import MemoryStore
from knowledge.models import ChatSession, Message
from knowledge.transfer import export as home_export
from knowledge.transfer import hermes_import as transfer
from tests.knowledge.transfer.test_hermes_import import make_hermes_home

pytestmark = pytest.mark.django_db


def _export_members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]


def test_export_contains_memories_skills_and_sessions(auth_client, home: Path, tmp_path: Path) -> None:
    transfer.import_path(make_hermes_home(tmp_path / "h"))
    s = ChatSession.objects.create(title="Exported chat", source="cli")
    Message.objects.create(session=s, role="user", content="hello <script>")
    Message.objects.create(session=s, role="assistant", content="hi", tool_calls=[{"id": "1"}])
    resp = auth_client.get("/transfer/export/")
    assert resp.status_code == 200 and "attachment" in resp["Content-Disposition"]
    members = _export_members(b"".join(resp.streaming_content))
    root = home_export.EXPORT_ROOT
    assert members[f"{root}/memories/MEMORY.md"] == (home / "memories" / "MEMORY.md").read_bytes()
    assert f"{root}/skills/devops/docker-compose-debug/references/ports.md" in members
    assert not any(n.endswith(".lock") for n in members)
    sessions = [json.loads(line) for line in members[f"{root}/sessions.jsonl"].splitlines()]
    messages = [json.loads(line) for line in members[f"{root}/messages.jsonl"].splitlines()]
    assert sessions[0]["title"] == "Exported chat" and sessions[0]["source"] == "cli"
    assert [m["content"] for m in messages] == ["hello <script>", "hi"]
    assert messages[1]["tool_calls"] == [{"id": "1"}] and messages[0]["session_id"] == s.pk
    assert json.loads(members[f"{root}/manifest.json"])["messages"] == 2


def test_export_command_archive_imports_back_as_a_hermes_home(home: Path, tmp_path: Path) -> None:
    transfer.import_path(make_hermes_home(tmp_path / "h"))
    out = tmp_path / "out.tar.gz"
    call_command("export_hermes", str(out))
    memory_before = MemoryStore().entries("memory")
    # Re-importing the export is a no-op merge: everything is already there.
    report = transfer.import_path(out)
    assert report.count("added") == 0 and report.count("duplicate") == len(memory_before) + 2
    assert report.count("skipped", ("skill",)) == 2


@pytest.mark.parametrize("how", ["page", "command"])
def test_export_as_a_hermes_home_has_memories_and_skills_at_the_top(
    auth_client, home: Path, tmp_path: Path, how: str
) -> None:
    transfer.import_path(make_hermes_home(tmp_path / "h"))
    if how == "page":
        page = auth_client.get("/transfer/").content.decode()
        assert 'id="export-download-home"' in page and "/transfer/export/?layout=home" in page
        resp = auth_client.get("/transfer/export/", {"layout": "home"})
        data = b"".join(resp.streaming_content)
    else:
        call_command("export_hermes", str(tmp_path / "home.tar.gz"), "--layout", "home")
        data = (tmp_path / "home.tar.gz").read_bytes()
    members = _export_members(data)
    assert members["memories/MEMORY.md"] == (home / "memories" / "MEMORY.md").read_bytes()
    assert "skills/devops/docker-compose-debug/references/ports.md" in members
    assert {n.split("/")[0] for n in members} == {"memories", "skills", "dashboard-export"}
    unpacked = tmp_path / "unpacked"
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(unpacked, filter="data")
    assert transfer.find_home(unpacked) == unpacked  # a Hermes home as it is


def test_unknown_export_layout_is_a_clear_error(auth_client, home: Path, tmp_path: Path) -> None:
    assert auth_client.get("/transfer/export/", {"layout": "flat"}).status_code == 400
    with pytest.raises(CommandError):
        call_command("export_hermes", str(tmp_path / "x.tar.gz"), "--layout", "flat")
