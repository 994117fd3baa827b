"""Upgrading a database made with an earlier schema keeps every row, every link between rows, and
the full-text search over them: the first schema (conversations in the `agent` app,
tests/fixtures/make_v1_db.py) and the one before the `agent` app's migrations were folded into
`knowledge` and the migrations lost their ticket numbers (tests/fixtures/make_v2_db.py), the
latter on SQLite and PostgreSQL."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import psycopg
import pytest

from tests import dbs
from tests.cli import CLIHome

pytestmark = pytest.mark.slow

# The first schema shipped as a SQLite database: the upgrade path people actually have.
sqlite_only = pytest.mark.skipif(dbs.on_postgres(), reason="the fixture is a SQLite database")
postgres_only = pytest.mark.skipif(not dbs.on_postgres(), reason="the fixture is a PostgreSQL dump")

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
FIXTURE = FIXTURES / "schema_v1.sqlite3"
V2_SQLITE = FIXTURES / "schema_v2.sqlite3"
V2_POSTGRES = FIXTURES / "schema_v2_postgres.sql"
V2_TABLES = [
    "knowledge_chatsession", "knowledge_message", "knowledge_reviewrun", "knowledge_knowledgechange",
    "knowledge_pendingwrite", "knowledge_skillusage", "knowledge_modelcapabilities", "knowledge_skilloutcome",
    "knowledge_answerfeedback",
]  # fmt: skip
# What the search finds in the fixture's rows, and a message written after the upgrade.
SEARCH_SCRIPT = (
    "from knowledge.search import search_messages\n"
    "from knowledge.models import ChatSession, Message\n"
    "def found(q): return sorted(Message.objects.get(pk=h.message_id).content for h in search_messages(q).results)\n"
    "print(found('OOM killer'))\n"
    "print(found('部署失败'))\n"
    "print(found('memory target'))\n"
    "Message.objects.create(session=ChatSession.objects.get(name='demo'), role='user', content='zebra crossing')\n"
    "print(len(search_messages('zebra').results))\n"
)
SEARCH_OUTPUT = [
    "['Exit 137 means the OOM killer ran.']",
    "['服务器部署失败了，怎么办？']",
    "['']",  # the tool call's arguments
    "1",
]

# (old table, new table): the conversation tables moved; the knowledge tables stayed.
TABLES = [
    ("agent_chatsession", "knowledge_chatsession"),
    ("agent_message", "knowledge_message"),
    ("agent_reviewrun", "knowledge_reviewrun"),
    ("knowledge_knowledgechange", "knowledge_knowledgechange"),
    ("knowledge_pendingwrite", "knowledge_pendingwrite"),
    ("knowledge_skillusage", "knowledge_skillusage"),
]


# Both fixtures hold a fork, "b…" of "a…", made by editing a's first message: since versions live in
# one chat (knowledge/migrations/0020_fold_forks.py) it is folded into "a…".
FORK, CHAT = "b" * 32, "a" * 32
# What the fold changes in the chat's row: its counts over every version, the fork's live state.
FOLDED_SESSION_COLUMNS = {
    "parent_id", "message_count", "user_turn_count", "tool_call_count", "turns_since_memory", "iters_since_skill",
    "system_prompt", "updated_at", "ended_at", "end_reason", "end_worker", "title_source",
}  # fmt: skip


def _folded(table: str, columns: list[str], rows: list[tuple]) -> tuple[list[str], list[tuple]]:
    """The columns to compare and the rows a table should hold once the fork is folded in."""
    if table == "knowledge_chatsession":
        kept = [c for c in columns if c not in FOLDED_SESSION_COLUMNS]
        places = [columns.index(c) for c in kept]
        rows = [tuple(row[i] for i in places) for row in rows if row[columns.index("id")] != FORK]
        return kept, sorted(rows, key=repr)
    if "session_id" in columns:
        at = columns.index("session_id")
        rows = [row[:at] + ((CHAT if row[at] == FORK else row[at]),) + row[at + 1 :] for row in rows]
    return columns, sorted(rows, key=repr)


def _check_folded(rows) -> None:
    """The fork's message is the second version of the chat's first one, and the version shown."""
    assert rows("knowledge_chatsession", ["id", "message_count", "user_turn_count", "leaf_id"])[0] == (CHAT, 5, 2, None)
    assert rows("knowledge_message", ["id", "parent_id", "session_id"]) == [
        (1, None, CHAT), (2, 1, CHAT), (3, 2, CHAT), (4, 3, CHAT), (5, None, CHAT),
    ]  # fmt: skip


def _columns(db: Path, table: str) -> list[str]:
    with sqlite3.connect(db) as conn:
        return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def _rows(db: Path, table: str, columns: list[str]) -> list[tuple]:
    """Every row, by the columns the previous schema had (later migrations add columns)."""
    with sqlite3.connect(db) as conn:
        return sorted(conn.execute(f"SELECT {', '.join(columns)} FROM {table}").fetchall(), key=repr)


@sqlite_only
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
        kept, expected = _folded(new, columns[new], before[new])
        assert _rows(db, new, kept) == expected, new
    _check_folded(lambda table, cols: _rows(db, table, cols))
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        leftovers = conn.execute(
            "SELECT name FROM sqlite_master WHERE type IN ('table', 'view', 'trigger') AND name LIKE 'agent%'"
        ).fetchall()
        assert leftovers == []
        for table in ("knowledge_message_fts", "knowledge_message_trigram"):
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)")


@sqlite_only
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


def _applied(rows: list[tuple]) -> dict[str, set[str]]:
    apps: dict[str, set[str]] = {}
    for app, name in rows:
        apps.setdefault(app, set()).add(name)
    return apps


def _check_migrated(home: CLIHome, before: dict[str, list[tuple]], columns: dict[str, list[str]], rows) -> None:
    for table in V2_TABLES:
        kept, expected = _folded(table, columns[table], before[table])
        assert rows(table, kept) == expected, table
    _check_folded(rows)
    applied = _applied(home.query("SELECT app, name FROM django_migrations"))
    assert "agent" not in applied  # the app has no migrations: their records are gone
    assert {"0011_postgres_search_table", "0015_search_top_postgres", "0016_forget_agent_migrations"} <= applied[
        "knowledge"
    ]
    # Recorded under the names of the files today: the names with a ticket number are renamed.
    on_disk = {p.stem for p in (Path(__file__).resolve().parents[2] / "knowledge" / "migrations").glob("0*.py")}
    assert applied["knowledge"] == on_disk
    pending = home.manage("migrate", "--check", "--noinput")
    assert pending.returncode == 0, pending.stdout + pending.stderr
    done = home.manage("shell", "--no-imports", "-c", SEARCH_SCRIPT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == SEARCH_OUTPUT


@sqlite_only
def test_todays_schema_migrates_with_every_row_and_the_search_index(tmp_path):
    home = CLIHome(tmp_path / "home")
    home.path.mkdir()
    db = home.path / "dashboard.sqlite3"
    shutil.copy(V2_SQLITE, db)
    columns = {table: _columns(V2_SQLITE, table) for table in V2_TABLES}
    before = {table: _rows(V2_SQLITE, table, columns[table]) for table in V2_TABLES}
    assert all(before.values()), "the fixture holds rows in every table"

    done = home.manage("migrate", "--noinput")
    assert done.returncode == 0, done.stderr
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
        for table in ("knowledge_message_fts", "knowledge_message_trigram"):
            conn.execute(f"INSERT INTO {table}({table}, rank) VALUES('integrity-check', 1)")
        assert conn.execute("SELECT count(*) FROM knowledge_message_fts").fetchone() == (5,)
    _check_migrated(home, before, columns, lambda table, cols: _rows(db, table, cols))


def _pg_rows(url: str, table: str, columns: list[str]) -> list[tuple]:
    with psycopg.connect(url) as conn:
        names = ", ".join(f'"{c}"' for c in columns)  # `binary` is a keyword on PostgreSQL
        return sorted(conn.execute(f"SELECT {names} FROM public.{table}").fetchall(), key=repr)


@postgres_only
def test_todays_schema_on_postgres_migrates_with_every_row_and_the_search_index(tmp_path):
    home = CLIHome(tmp_path / "home")
    home.path.mkdir()
    url = dbs.database_env(home.path)["DATABASE_URL"]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(V2_POSTGRES.read_text(encoding="utf-8"))
    with psycopg.connect(url) as conn:
        columns = {
            table: [
                row[0]
                for row in conn.execute(
                    "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                    [table],
                )
            ]
            for table in V2_TABLES
        }
    before = {table: _pg_rows(url, table, columns[table]) for table in V2_TABLES}
    assert all(before.values()), "the fixture holds rows in every table"

    done = home.manage("migrate", "--noinput")
    assert done.returncode == 0, done.stderr
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT count(*) FROM knowledge_message_search").fetchone() == (5,)
    _check_migrated(home, before, columns, lambda table, cols: _pg_rows(url, table, cols))
