"""Top lists for common words (knowledge/search/top.py): a word's best-ranked message ids by bm25,
so searching it ranks a few hundred candidates instead of every hit. SQLite only: PostgreSQL has
its own full-text index (knowledge 0006). Filled by searches and by `rebuild_search_index`."""

from django.db import migrations

TOP = "knowledge_message_fts_top"

FORWARD_SQL = [
    f"""CREATE TABLE IF NOT EXISTS {TOP} (
        token TEXT PRIMARY KEY,
        upto INTEGER NOT NULL,
        ids TEXT NOT NULL
    ) WITHOUT ROWID""",
]
REVERSE_SQL = [f"DROP TABLE IF EXISTS {TOP}"]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "sqlite":
            for sql in statements:
                schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0011_postgres_search_table")]

    operations = [migrations.RunPython(_run(FORWARD_SQL), _run(REVERSE_SQL))]
