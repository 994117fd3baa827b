"""PostgreSQL search, second shape: the word index moves to a narrow table of its own,
and no English stop word is dropped.

- `knowledge_message_search` holds one row per message: its id, the columns search filters on
  (session, role, time) and the tsvector, with the GIN index. Ranking reads every hit's tsvector;
  in `knowledge_message` those sat between the full text and its lowercased copy, about six times
  the bytes per row, and at a million messages ranking a common word read most of the table.
  Kept current by triggers on `knowledge_message` (insert, update, delete, truncate).
- The `hermes` configuration stems with a snowball dictionary that has no stop-word list, as
  FTS5 does: "other", "so" or "once" found nothing on PostgreSQL and thousands of messages on
  SQLite.
- `search_text` (the pg_trgm index for unsegmented text) stays on the message row.

FORWARD is complete and idempotent. The SQL is this migration's own, frozen: the product's current
search objects are in knowledge/search/schema.py. On SQLite this migration does nothing.
"""

from django.db import migrations

TOOL_ARGS_FUNCTION = """CREATE OR REPLACE FUNCTION knowledge_tool_args(calls jsonb) RETURNS text AS $$
    SELECT coalesce((
        SELECT string_agg(coalesce(c->'function'->>'name', '') || ' ' || coalesce(c->'function'->>'arguments', ''), ' ')
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(calls) = 'array' THEN calls ELSE '[]'::jsonb END) c
    ), '')
$$ LANGUAGE sql IMMUTABLE"""

# Text in A, tool name and call arguments in B: a word a person wrote outranks one in a tool call.
VECTOR_FUNCTION = """CREATE OR REPLACE FUNCTION knowledge_message_vector(content text, tool_name text, calls jsonb)
RETURNS tsvector AS $$
    SELECT setweight(to_tsvector('hermes', coalesce(content, '')), 'A') ||
           setweight(to_tsvector('hermes', coalesce(tool_name, '') || ' ' || knowledge_tool_args(calls)), 'B')
$$ LANGUAGE sql STABLE"""

SEARCH_TEXT = "lower(coalesce({row}.content, '') || ' ' || knowledge_tool_args({row}.tool_calls))"

SCHEMA = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    """DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_ts_dict WHERE dictname = 'hermes_stem') THEN
            CREATE TEXT SEARCH DICTIONARY hermes_stem (TEMPLATE = snowball, Language = english);
        END IF;
        IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'hermes') THEN
            CREATE TEXT SEARCH CONFIGURATION hermes (COPY = english);
        END IF;
    END $$""",
    "ALTER TEXT SEARCH CONFIGURATION hermes ALTER MAPPING FOR asciiword, asciihword, hword_asciipart WITH hermes_stem",
    "ALTER TEXT SEARCH CONFIGURATION hermes ALTER MAPPING FOR word, hword, hword_part WITH unaccent, hermes_stem",
    TOOL_ARGS_FUNCTION,
    VECTOR_FUNCTION,
    "ALTER TABLE knowledge_message ADD COLUMN IF NOT EXISTS search_text text",
    """CREATE TABLE IF NOT EXISTS knowledge_message_search (
        id bigint PRIMARY KEY,
        session_id varchar(32) NOT NULL,
        role varchar(10) NOT NULL,
        created_at timestamp with time zone NOT NULL,
        search_vector tsvector NOT NULL
    )""",
    f"""CREATE OR REPLACE FUNCTION knowledge_message_search() RETURNS trigger AS $$
    BEGIN
        NEW.search_text := {SEARCH_TEXT.format(row="NEW")};
        RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    """CREATE OR REPLACE FUNCTION knowledge_message_search_sync() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'TRUNCATE' THEN
            TRUNCATE knowledge_message_search;
        ELSIF TG_OP = 'DELETE' THEN
            DELETE FROM knowledge_message_search WHERE id = OLD.id;
        ELSE
            INSERT INTO knowledge_message_search (id, session_id, role, created_at, search_vector)
            VALUES (NEW.id, NEW.session_id, NEW.role, NEW.created_at,
                    knowledge_message_vector(NEW.content, NEW.tool_name, NEW.tool_calls))
            ON CONFLICT (id) DO UPDATE SET session_id = EXCLUDED.session_id, role = EXCLUDED.role,
                created_at = EXCLUDED.created_at, search_vector = EXCLUDED.search_vector;
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    "DROP TRIGGER IF EXISTS knowledge_message_search ON knowledge_message",
    """CREATE TRIGGER knowledge_message_search BEFORE INSERT OR UPDATE OF content, tool_name, tool_calls
        ON knowledge_message FOR EACH ROW EXECUTE FUNCTION knowledge_message_search()""",
    "DROP TRIGGER IF EXISTS knowledge_message_search_sync ON knowledge_message",
    """CREATE TRIGGER knowledge_message_search_sync
        AFTER INSERT OR DELETE OR UPDATE OF content, tool_name, tool_calls, session_id, role, created_at
        ON knowledge_message FOR EACH ROW EXECUTE FUNCTION knowledge_message_search_sync()""",
    "DROP TRIGGER IF EXISTS knowledge_message_search_truncate ON knowledge_message",
    """CREATE TRIGGER knowledge_message_search_truncate AFTER TRUNCATE ON knowledge_message
        FOR EACH STATEMENT EXECUTE FUNCTION knowledge_message_search_sync()""",
    # The first shape's column and index (0006), now in the table above.
    "DROP INDEX IF EXISTS knowledge_message_search_vector",
    "ALTER TABLE knowledge_message DROP COLUMN IF EXISTS search_vector",
]

# Every entry recomputed in two set-based statements (the triggers above do it row by row).
REBUILD = [
    f"UPDATE knowledge_message m SET search_text = {SEARCH_TEXT.format(row='m')}",
    "TRUNCATE knowledge_message_search",
    """INSERT INTO knowledge_message_search (id, session_id, role, created_at, search_vector)
        SELECT id, session_id, role, created_at, knowledge_message_vector(content, tool_name, tool_calls)
        FROM knowledge_message""",
]

# Built after the rows are in: one sort instead of a million index insertions.
INDEXES = [
    "CREATE INDEX IF NOT EXISTS knowledge_message_search_vector ON knowledge_message_search USING gin (search_vector)",
    "CREATE INDEX IF NOT EXISTS knowledge_message_search_trgm ON knowledge_message USING gin (search_text gin_trgm_ops)",
]

FORWARD = SCHEMA + REBUILD + INDEXES

REVERSE = [
    "DROP TRIGGER IF EXISTS knowledge_message_search_truncate ON knowledge_message",
    "DROP TRIGGER IF EXISTS knowledge_message_search_sync ON knowledge_message",
    "DROP FUNCTION IF EXISTS knowledge_message_search_sync()",
    "DROP TABLE IF EXISTS knowledge_message_search",
    "DROP FUNCTION IF EXISTS knowledge_message_vector(text, text, jsonb)",
    "DROP FUNCTION IF EXISTS knowledge_tool_args(jsonb)",
    "ALTER TEXT SEARCH CONFIGURATION hermes ALTER MAPPING FOR asciiword, asciihword, hword_asciipart WITH english_stem",
    "ALTER TEXT SEARCH CONFIGURATION hermes ALTER MAPPING FOR word, hword, hword_part WITH unaccent, english_stem",
    "DROP TEXT SEARCH DICTIONARY IF EXISTS hermes_stem",
]


# 0006_postgres_search's objects, restored on the way back (a frozen copy: no migration imports another).
_FIRST_SHAPE_TOOL_ARGS = """coalesce((
    SELECT string_agg(coalesce(c->'function'->>'name', '') || ' ' || coalesce(c->'function'->>'arguments', ''), ' ')
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(NEW.tool_calls) = 'array' THEN NEW.tool_calls ELSE '[]'::jsonb END) c
), '')"""

FIRST_SHAPE = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    "CREATE EXTENSION IF NOT EXISTS unaccent",
    """DO $$ BEGIN
        IF NOT EXISTS (SELECT 1 FROM pg_ts_config WHERE cfgname = 'hermes') THEN
            CREATE TEXT SEARCH CONFIGURATION hermes (COPY = english);
            ALTER TEXT SEARCH CONFIGURATION hermes
                ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;
        END IF;
    END $$""",
    "ALTER TABLE knowledge_message ADD COLUMN IF NOT EXISTS search_vector tsvector",
    "ALTER TABLE knowledge_message ADD COLUMN IF NOT EXISTS search_text text",
    f"""CREATE OR REPLACE FUNCTION knowledge_message_search() RETURNS trigger AS $$
    DECLARE args text := {_FIRST_SHAPE_TOOL_ARGS};
    BEGIN
        NEW.search_vector :=
            setweight(to_tsvector('hermes', coalesce(NEW.content, '')), 'A') ||
            setweight(to_tsvector('hermes', coalesce(NEW.tool_name, '') || ' ' || args), 'B');
        NEW.search_text := lower(coalesce(NEW.content, '') || ' ' || args);
        RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    "DROP TRIGGER IF EXISTS knowledge_message_search ON knowledge_message",
    """CREATE TRIGGER knowledge_message_search BEFORE INSERT OR UPDATE OF content, tool_name, tool_calls
        ON knowledge_message FOR EACH ROW EXECUTE FUNCTION knowledge_message_search()""",
    "UPDATE knowledge_message SET content = content",
    "CREATE INDEX IF NOT EXISTS knowledge_message_search_vector ON knowledge_message USING gin (search_vector)",
    "CREATE INDEX IF NOT EXISTS knowledge_message_search_trgm ON knowledge_message USING gin (search_text gin_trgm_ops)",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for sql in statements:
                schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0010_evidence_outcomes")]

    # Back to 0006's shape: its column, trigger and index, computed again.
    operations = [
        migrations.RunPython(_run(FORWARD), _run(REVERSE + FIRST_SHAPE))
    ]
