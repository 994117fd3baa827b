"""Full-text search on PostgreSQL, the counterpart of SQLite's FTS5 index (0003).

- `search_vector`: a tsvector over the message text, the tool name and the tool-call names and
  arguments, in the `hermes` text search configuration (English stemming, accents folded like
  FTS5's remove_diacritics), kept current by a trigger on every insert and update, with a GIN index.
- `search_text`: the same text lowercased, with a pg_trgm GIN index, for Chinese, Japanese and
  other unsegmented text (substring search, as FTS5's trigram index).

On SQLite this migration does nothing. pg_trgm and unaccent are trusted extensions (PostgreSQL
13+): the database owner can create them.
"""

from django.db import migrations

TOOL_ARGS = """coalesce((
    SELECT string_agg(coalesce(c->'function'->>'name', '') || ' ' || coalesce(c->'function'->>'arguments', ''), ' ')
    FROM jsonb_array_elements(CASE WHEN jsonb_typeof(NEW.tool_calls) = 'array' THEN NEW.tool_calls ELSE '[]'::jsonb END) c
), '')"""

FORWARD = [
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
    DECLARE args text := {TOOL_ARGS};
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

REVERSE = [
    "DROP TRIGGER IF EXISTS knowledge_message_search ON knowledge_message",
    "DROP FUNCTION IF EXISTS knowledge_message_search()",
    "ALTER TABLE knowledge_message DROP COLUMN IF EXISTS search_vector",
    "ALTER TABLE knowledge_message DROP COLUMN IF EXISTS search_text",
]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for sql in statements:
                schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0005_turn_lease_and_run_worker")]

    operations = [migrations.RunPython(_run(FORWARD), _run(REVERSE))]
