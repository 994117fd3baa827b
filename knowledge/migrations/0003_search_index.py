"""Full-text search over messages: two FTS5 indexes kept in sync by triggers.

1. `knowledge_message_fts` — word index (porter + unicode61, diacritics folded), an FTS5
   *external-content* table whose content is the view `knowledge_message_search_src`: the message
   row plus `tool_args`, the tool-call names and argument text pulled out of the `tool_calls`
   JSON. A view (not `knowledge_message` itself) because external content is read by column name
   and the tool-call text is not a real column. The view uses a recursive CTE rather than
   `json_each`: FTS5's 'rebuild' and 'integrity-check' fail ("SQL logic error") when the
   content view itself contains a table-valued function, and a CTE does not.
   External-content deletes must be given the *old* values, and CTEs are not allowed inside
   trigger bodies, so the old entry is removed by a BEFORE trigger that reads the (still
   unchanged) row through the view, and the new one added by an AFTER trigger.

2. `knowledge_message_trigram` — substring index (trigram tokenizer) so Chinese, Japanese and
   other unsegmented text is searchable. It is a regular FTS5 table holding its own copy, but
   only of messages that contain a non-ASCII character (character length differs from byte
   length): a pure-ASCII message is fully served by the word index, and any query that needs
   the trigram index contains such a character itself, so nothing is lost. Because it holds
   its own copy, deletes go by rowid (no drift possible) and the LIKE fallback for 1–2
   character queries only scans this small subset.

Any later migration that remakes `knowledge_message` (SQLite ALTER via table copy) drops these
triggers: run `manage.py rebuild_search_index`, which recreates missing objects (from the product's
search schema, knowledge/search/schema.py; the SQL below is this migration's frozen copy) and
repopulates both indexes.
"""

from django.db import migrations

VIEW = "knowledge_message_search_src"
FTS = "knowledge_message_fts"
TRIGRAM = "knowledge_message_trigram"

# Tool-call names + arguments as one text, for any number of calls; NULL when there are none
# or the JSON is not an array (never an error, so a malformed row cannot block a write).
_TOOL_ARGS = """(CASE WHEN json_valid(m.tool_calls) AND json_type(m.tool_calls) = 'array' THEN (
    WITH RECURSIVE tc(i, txt) AS (
        SELECT 0, NULL
        UNION ALL
        SELECT i + 1,
               coalesce(json_extract(m.tool_calls, '$[' || i || '].function.name'), '') || ' ' ||
               coalesce(json_extract(m.tool_calls, '$[' || i || '].function.arguments'), '')
        FROM tc WHERE i < json_array_length(m.tool_calls)
    )
    SELECT group_concat(txt, ' ') FROM tc WHERE txt IS NOT NULL
) END)"""

# Non-ASCII test: character length differs from byte length.
_NON_ASCII = (
    "(length(coalesce(content, '')) <> length(CAST(coalesce(content, '') AS BLOB))"
    " OR length(coalesce(tool_args, '')) <> length(CAST(coalesce(tool_args, '') AS BLOB)))"
)

# Only changes to indexed columns touch the index (Django's save() rewrites every column).
_CHANGED = (
    "OLD.content IS NOT NEW.content OR OLD.tool_name IS NOT NEW.tool_name OR OLD.tool_calls IS NOT NEW.tool_calls"
)

_FTS_INSERT = (
    f"INSERT INTO {FTS}(rowid, content, tool_name, tool_args) "
    f"SELECT id, content, tool_name, tool_args FROM {VIEW} WHERE id = NEW.id;"
)
_FTS_DELETE = (
    f"INSERT INTO {FTS}({FTS}, rowid, content, tool_name, tool_args) "
    f"SELECT 'delete', id, content, tool_name, tool_args FROM {VIEW} WHERE id = OLD.id;"
)
_TRI_INSERT = (
    f"INSERT INTO {TRIGRAM}(rowid, content, tool_args) "
    f"SELECT id, content, tool_args FROM {VIEW} WHERE id = NEW.id AND {_NON_ASCII};"
)
_TRI_DELETE = f"DELETE FROM {TRIGRAM} WHERE rowid = OLD.id;"

TABLES_SQL = [
    f"""CREATE VIEW IF NOT EXISTS {VIEW} AS
        SELECT m.id AS id, m.content AS content, m.tool_name AS tool_name, {_TOOL_ARGS} AS tool_args
        FROM knowledge_message m""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5(
        content, tool_name, tool_args,
        content='{VIEW}', content_rowid='id',
        tokenize='porter unicode61 remove_diacritics 2')""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS {TRIGRAM} USING fts5(
        content, tool_args, tokenize='trigram')""",
]

TRIGGERS_SQL = [
    f"""CREATE TRIGGER IF NOT EXISTS knowledge_message_search_ai AFTER INSERT ON knowledge_message BEGIN
        {_FTS_INSERT}
        {_TRI_INSERT}
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS knowledge_message_search_bd BEFORE DELETE ON knowledge_message BEGIN
        {_FTS_DELETE}
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS knowledge_message_search_ad AFTER DELETE ON knowledge_message BEGIN
        {_TRI_DELETE}
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS knowledge_message_search_bu BEFORE UPDATE ON knowledge_message
        WHEN {_CHANGED} BEGIN
        {_FTS_DELETE}
    END""",
    f"""CREATE TRIGGER IF NOT EXISTS knowledge_message_search_au AFTER UPDATE ON knowledge_message
        WHEN {_CHANGED} BEGIN
        {_FTS_INSERT}
        {_TRI_DELETE}
        {_TRI_INSERT}
    END""",
]

TRIGGER_NAMES = [
    "knowledge_message_search_ai",
    "knowledge_message_search_bd",
    "knowledge_message_search_ad",
    "knowledge_message_search_bu",
    "knowledge_message_search_au",
]

# Fill both indexes from knowledge_message (for databases that already hold messages).
REBUILD_SQL = [
    f"INSERT INTO {FTS}({FTS}) VALUES('rebuild')",
    f"DELETE FROM {TRIGRAM}",
    f"INSERT INTO {TRIGRAM}(rowid, content, tool_args) SELECT id, content, tool_args FROM {VIEW} WHERE {_NON_ASCII}",
]

FORWARD_SQL = TABLES_SQL + TRIGGERS_SQL + REBUILD_SQL

REVERSE_SQL = [f"DROP TRIGGER IF EXISTS {name}" for name in TRIGGER_NAMES] + [
    f"DROP TABLE IF EXISTS {TRIGRAM}",
    f"DROP TABLE IF EXISTS {FTS}",
    f"DROP VIEW IF EXISTS {VIEW}",
]


def _run(statements):
    def run(apps, schema_editor):
        # SQLite's FTS5; PostgreSQL gets its own full-text index (knowledge 0006_postgres_search).
        if schema_editor.connection.vendor == "sqlite":
            for sql in statements:
                schema_editor.execute(sql, params=None)

    return run


class Migration(migrations.Migration):
    # Over the table moved from the agent app (agent 0003 dropped the index that named the old table).
    dependencies = [("knowledge", "0002_conversations")]

    operations = [migrations.RunPython(_run(FORWARD_SQL), _run(REVERSE_SQL))]
