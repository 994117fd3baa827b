"""Upgrading a database made with the previous schema (conversations in the `agent` app) keeps
every row, every link between rows, and the full-text search over them."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from tests import dbs
from tests.cli import CLIHome

# The previous schema shipped as a SQLite database: the upgrade path people actually have.
pytestmark = pytest.mark.skipif(dbs.on_postgres(), reason="the fixture is a SQLite database")

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "schema_v1.sqlite3"

# (old table, new table): the conversation tables moved; the knowledge tables stayed.
TABLES = [
    ("agent_chatsession", "knowledge_chatsession"),
    ("agent_message", "knowledge_message"),
    ("agent_reviewrun", "knowledge_reviewrun"),
    ("knowledge_knowledgechange", "knowledge_knowledgechange"),
    ("knowledge_pendingwrite", "knowledge_pendingwrite"),
    ("knowledge_skillusage", "knowledge_skillusage"),
]


def _columns(db: Path, table: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _rows(db: Path, table: str, columns: list[str]) -> list[tuple]:
    """Every row, by the columns the previous schema had (later migrations add columns)."""
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall(), key=repr)


def test_previous_schema_migrates_with_every_row_and_the_search_index(tmp_path):
    home = CLIHome(tmp_path / "home")
    home.path.mkdir()
    db = home.path / "dashboard.sqlite3"
    shutil.copy(FIXTURE, db)
    columns = {new: _columns(FIXTURE, old) for old, new in TABLES}
    before = {new: _rows(FIXTURE, old, columns[new]) for old, new in TABLES}
    assert all(before.values()), "the fixture holds rows in every table"

    done = home.manage("migrate", "--noinput")
    assert done.returncode == 0, done.stderr

    for _old, new in TABLES:
        assert _rows(db, new, columns[new]) == before[new], new
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        leftovers = conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger') AND name LIKE 'agent%'"
        ).fetchall()
        assert leftovers == []
        for table in ("knowledge_message_fts", "knowledge_message_trigram"):
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)")


def test_migrated_history_is_searchable_and_new_messages_are_indexed(tmp_path):
    home = CLIHome(tmp_path / "home")
    home.path.mkdir()
    shutil.copy(FIXTURE, home.path / "dashboard.sqlite3")
    assert home.manage("migrate", "--noinput").returncode == 0
    script = (
        "from knowledge.search import search_messages\n"
        "from knowledge.models import ChatSession, Message\n"
        "def found(q): return sorted(Message.objects.get(pk=h.message_id).content for h in search_messages(q).results)\n"
        "print(found('OOM killer'))\n"
        "print(found('部署失败'))\n"
        "Message.objects.create(session=ChatSession.objects.get(name='demo'), role='user', content='zebra crossing')\n"
        "print(len(search_messages('zebra').results))\n"
    )
    done = home.manage("shell", "--no-imports", "-c", script)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "['Exit 137 means the OOM killer ran.']",
        "['服务器部署失败了，怎么办？']",
        "1",
    ]
