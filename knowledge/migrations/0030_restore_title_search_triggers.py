"""Puts back the triggers that keep the session titles' index current on SQLite.

0028 added `private` to knowledge_chatsession with Django's AddField, which SQLite carries out by
rebuilding the table; the rebuild dropped 0023's triggers on it, so chats created or renamed
since were not found by their titles. The triggers are created again and the index refilled
from the sessions stored. PostgreSQL's title index survives ADD COLUMN: nothing to do there.

The SQL is a frozen copy of 0023's.
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


def restore(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for sql in SQLITE_FORWARD:
            schema_editor.execute(sql, params=None)


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0029_reviewrun_focus")]

    operations = [migrations.RunPython(restore, migrations.RunPython.noop)]
