"""Session titles get an index of their own, so a title search no longer reads every session row.

SQLite: a trigram FTS5 table of the lowercased titles, its rowids from a table of one integer per
session id (session ids are text, and their implicit rowids may change on VACUUM), kept current by
triggers on knowledge_chatsession, and filled from the sessions already stored. From here on a
migration that adds a column to knowledge_chatsession must use a plain ADD COLUMN (as 0009 does
for messages): SQLite's table rebuild would drop these triggers.
PostgreSQL: a pg_trgm index on lower(title), which its planner uses for the same LIKE.

The SQL is a frozen copy of knowledge/search/schema.py's of this day.
"""

from django.db import migrations

TITLES = "knowledge_chatsession_title"
ROWS = f"{TITLES}_row"
ROW = f"(SELECT row FROM {ROWS} WHERE session_id = {{}}.id)"

SQLITE_FORWARD = [
    f"CREATE TABLE IF NOT EXISTS {ROWS} (row INTEGER PRIMARY KEY, session_id TEXT NOT NULL UNIQUE)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {TITLES} USING fts5(title, tokenize='trigram')",
    f"""CREATE TRIGGER IF NOT EXISTS {TITLES}_ai AFTER INSERT ON knowledge_chatsession BEGIN
        INSERT INTO {ROWS}(session_id) VALUES (NEW.id);
        INSERT INTO {TITLES}(rowid, title) VALUES ({ROW.format("NEW")}, lower(NEW.title));
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TITLES}_au AFTER UPDATE OF title ON knowledge_chatsession
        WHEN OLD.title IS NOT NEW.title BEGIN
        UPDATE {TITLES} SET title = lower(NEW.title) WHERE rowid = {ROW.format("NEW")};
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS {TITLES}_ad AFTER DELETE ON knowledge_chatsession BEGIN
        DELETE FROM {TITLES} WHERE rowid = {ROW.format("OLD")};
        DELETE FROM {ROWS} WHERE session_id = OLD.id;
    END""",
    f"DELETE FROM {TITLES}",
    f"DELETE FROM {ROWS}",
    f"INSERT INTO {ROWS}(session_id) SELECT id FROM knowledge_chatsession",
    f"INSERT INTO {TITLES}(rowid, title) SELECT r.row, lower(s.title) FROM {ROWS} r"
    " JOIN knowledge_chatsession s ON s.id = r.session_id",
]
SQLITE_REVERSE = [
    f"DROP TRIGGER IF EXISTS {TITLES}_ai",
    f"DROP TRIGGER IF EXISTS {TITLES}_au",
    f"DROP TRIGGER IF EXISTS {TITLES}_ad",
    f"DROP TABLE IF EXISTS {TITLES}",
    f"DROP TABLE IF EXISTS {ROWS}",
]
PG_FORWARD = [
    "CREATE INDEX IF NOT EXISTS knowledge_chatsession_title_trgm"
    " ON knowledge_chatsession USING gin (lower(title) gin_trgm_ops)"
]
PG_REVERSE = ["DROP INDEX IF EXISTS knowledge_chatsession_title_trgm"]


def _run(sqlite, postgres):
    def run(apps, schema_editor):
        statements = sqlite if schema_editor.connection.vendor == "sqlite" else postgres
        for sql in statements:
            schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0022_chat_list_organisation_and_settings")]

    operations = [migrations.RunPython(_run(SQLITE_FORWARD, PG_FORWARD), _run(SQLITE_REVERSE, PG_REVERSE))]
