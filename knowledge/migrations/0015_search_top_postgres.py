"""Top lists for common words on PostgreSQL (knowledge/search/top.py, SQL in knowledge/search/top_postgres.py):
a word's best message ids by ts_rank, keyed by its lexeme, so searching it ranks a few hundred
candidates instead of every hit. PostgreSQL only (SQLite's lists are knowledge 0012). Filled by
searches and by `rebuild_search_index`, which runs FORWARD to recreate what is missing.

A list also keeps `hits`, the word's number of hits when it was made, and `removed`, the count of
search entries deleted or changed until then (`knowledge_message_search_removed`, kept by
statement triggers): each removal takes at most one hit away and new messages only add hits, so
`hits - (removed now - removed then)` is a lower bound of the word's hits — a search whose bound
is past the count cap shows "1000+" without counting (knowledge/search/postgres.py). Emptying the
search table (TRUNCATE) drops every list."""

from django.db import migrations

TOP = "knowledge_message_search_top"
REMOVED = "knowledge_message_search_removed"
SEARCH = "knowledge_message_search"

FORWARD = [
    f"""CREATE TABLE IF NOT EXISTS {TOP} (
        token text PRIMARY KEY,
        upto bigint NOT NULL,
        ids bigint[] NOT NULL,
        hits bigint NOT NULL,
        removed bigint NOT NULL
    )""",
    f"CREATE TABLE IF NOT EXISTS {REMOVED} (id integer PRIMARY KEY CHECK (id = 1), n bigint NOT NULL)",
    f"INSERT INTO {REMOVED} (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    f"""CREATE OR REPLACE FUNCTION {REMOVED}() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'TRUNCATE' THEN
            DELETE FROM {TOP};
        ELSE  -- no write for the empty updates of every insert (INSERT ... ON CONFLICT DO UPDATE)
            UPDATE {REMOVED} SET n = n + gone.c FROM (SELECT count(*) AS c FROM old_rows) gone WHERE gone.c > 0;
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    f"DROP TRIGGER IF EXISTS {REMOVED}_delete ON {SEARCH}",
    f"""CREATE TRIGGER {REMOVED}_delete AFTER DELETE ON {SEARCH} REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION {REMOVED}()""",
    f"DROP TRIGGER IF EXISTS {REMOVED}_update ON {SEARCH}",
    f"""CREATE TRIGGER {REMOVED}_update AFTER UPDATE ON {SEARCH} REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION {REMOVED}()""",
    f"DROP TRIGGER IF EXISTS {REMOVED}_truncate ON {SEARCH}",
    f"CREATE TRIGGER {REMOVED}_truncate AFTER TRUNCATE ON {SEARCH} FOR EACH STATEMENT EXECUTE FUNCTION {REMOVED}()",
]
REVERSE = [
    f"DROP TRIGGER IF EXISTS {REMOVED}_truncate ON {SEARCH}",
    f"DROP TRIGGER IF EXISTS {REMOVED}_update ON {SEARCH}",
    f"DROP TRIGGER IF EXISTS {REMOVED}_delete ON {SEARCH}",
    f"DROP FUNCTION IF EXISTS {REMOVED}()",
    f"DROP TABLE IF EXISTS {REMOVED}",
    f"DROP TABLE IF EXISTS {TOP}",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for sql in statements:
                schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0014_session_end_worker")]

    operations = [migrations.RunPython(_run(FORWARD), _run(REVERSE))]
