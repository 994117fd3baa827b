"""The database objects of full-text search, for both databases, and how to rebuild them.

`manage.py rebuild_search_index` runs these statements to recreate whatever is missing and to
recompute every entry; the benchmarks load their histories with them. The migrations that first
created these objects keep frozen copies of the SQL of their day (a migration must not change
when the product does); tests/knowledge/search/test_schema.py checks that a migrated database
and one built from this module hold the same objects, so a change here comes with a migration.

SQLite (FTS5), two indexes kept in sync by triggers:

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
   other unsegmented text is searchable. It holds its own copy, but only of messages that contain
   a non-ASCII character: a pure-ASCII message is fully served by the word index, and any query
   that needs the trigram index contains such a character itself, so nothing is lost.

3. `knowledge_chatsession_title` — session titles, lowercased, in a trigram index, so a title
   search reads the few sessions whose titles hold the words instead of every session row. Its
   rowids come from `knowledge_chatsession_title_row` (one integer per session id): sessions
   have text ids, and their implicit rowids may change on VACUUM.

A table rebuild of `knowledge_message` (SQLite's way of altering a column) drops these
triggers: `rebuild_search_index` brings them back.

PostgreSQL: a narrow table `knowledge_message_search` (id, session, role, time, tsvector) with a
GIN index, kept current by triggers on `knowledge_message`; `search_text` (the lowercased text
with a pg_trgm index) for unsegmented scripts stays on the message row; session titles have a
pg_trgm index on `lower(title)`. The `hermes` text search
configuration stems with a snowball dictionary that has no stop-word list, as FTS5 does.

Top lists (knowledge/search/top.py) live in `knowledge_message_fts_top` (SQLite) and
`knowledge_message_search_top` (PostgreSQL, with the removal counter that bounds a word's hits).
"""

from __future__ import annotations

from typing import Any

MESSAGES = "knowledge_message"
SESSIONS = "knowledge_chatsession"

# -- SQLite -------------------------------------------------------------------------------------------

VIEW = "knowledge_message_search_src"
FTS = "knowledge_message_fts"
TRIGRAM = "knowledge_message_trigram"
FTS_TOP = f"{FTS}_top"
TOKENIZE = "porter unicode61 remove_diacritics 2"
TITLES = "knowledge_chatsession_title"
TITLE_ROWS = f"{TITLES}_row"

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

SQLITE_TABLES = [
    f"""CREATE VIEW IF NOT EXISTS {VIEW} AS
        SELECT m.id AS id, m.content AS content, m.tool_name AS tool_name, {_TOOL_ARGS} AS tool_args
        FROM knowledge_message m""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS {FTS} USING fts5(
        content, tool_name, tool_args,
        content='{VIEW}', content_rowid='id',
        tokenize='{TOKENIZE}')""",
    f"""CREATE VIRTUAL TABLE IF NOT EXISTS {TRIGRAM} USING fts5(
        content, tool_args, tokenize='trigram')""",
    f"""CREATE TABLE IF NOT EXISTS {FTS_TOP} (
        token TEXT PRIMARY KEY,
        upto INTEGER NOT NULL,
        ids TEXT NOT NULL
    ) WITHOUT ROWID""",
    f"CREATE TABLE IF NOT EXISTS {TITLE_ROWS} (row INTEGER PRIMARY KEY, session_id TEXT NOT NULL UNIQUE)",
    f"CREATE VIRTUAL TABLE IF NOT EXISTS {TITLES} USING fts5(title, tokenize='trigram')",
]

_TITLE_ROW = f"(SELECT row FROM {TITLE_ROWS} WHERE session_id = {{}}.id)"

SQLITE_TRIGGERS = {
    "knowledge_message_search_ai": f"""AFTER INSERT ON knowledge_message BEGIN
        {_FTS_INSERT}
        {_TRI_INSERT}
    END""",
    "knowledge_message_search_bd": f"""BEFORE DELETE ON knowledge_message BEGIN
        {_FTS_DELETE}
    END""",
    "knowledge_message_search_ad": f"""AFTER DELETE ON knowledge_message BEGIN
        {_TRI_DELETE}
    END""",
    "knowledge_message_search_bu": f"""BEFORE UPDATE ON knowledge_message
        WHEN {_CHANGED} BEGIN
        {_FTS_DELETE}
    END""",
    "knowledge_message_search_au": f"""AFTER UPDATE ON knowledge_message
        WHEN {_CHANGED} BEGIN
        {_FTS_INSERT}
        {_TRI_DELETE}
        {_TRI_INSERT}
    END""",
    f"{TITLES}_ai": f"""AFTER INSERT ON {SESSIONS} BEGIN
        INSERT INTO {TITLE_ROWS}(session_id) VALUES (NEW.id);
        INSERT INTO {TITLES}(rowid, title) VALUES ({_TITLE_ROW.format("NEW")}, lower(NEW.title));
    END""",
    f"{TITLES}_au": f"""AFTER UPDATE OF title ON {SESSIONS}
        WHEN OLD.title IS NOT NEW.title BEGIN
        UPDATE {TITLES} SET title = lower(NEW.title) WHERE rowid = {_TITLE_ROW.format("NEW")};
    END""",
    f"{TITLES}_ad": f"""AFTER DELETE ON {SESSIONS} BEGIN
        DELETE FROM {TITLES} WHERE rowid = {_TITLE_ROW.format("OLD")};
        DELETE FROM {TITLE_ROWS} WHERE session_id = OLD.id;
    END""",
}
SQLITE_TRIGGERS_SQL = [f"CREATE TRIGGER IF NOT EXISTS {name} {body}" for name, body in SQLITE_TRIGGERS.items()]

# Fill both indexes from knowledge_message (for databases that already hold messages).
SQLITE_REBUILD = [
    f"INSERT INTO {FTS}({FTS}) VALUES('rebuild')",
    f"DELETE FROM {TRIGRAM}",
    f"INSERT INTO {TRIGRAM}(rowid, content, tool_args) SELECT id, content, tool_args FROM {VIEW} WHERE {_NON_ASCII}",
    f"DELETE FROM {TITLES}",
    f"DELETE FROM {TITLE_ROWS}",
    f"INSERT INTO {TITLE_ROWS}(session_id) SELECT id FROM {SESSIONS}",
    f"INSERT INTO {TITLES}(rowid, title) SELECT r.row, lower(s.title) FROM {TITLE_ROWS} r"
    f" JOIN {SESSIONS} s ON s.id = r.session_id",
]

SQLITE_DROP = [f"DROP TRIGGER IF EXISTS {name}" for name in SQLITE_TRIGGERS] + [
    f"DROP TABLE IF EXISTS {TITLES}",
    f"DROP TABLE IF EXISTS {TITLE_ROWS}",
    f"DROP TABLE IF EXISTS {FTS_TOP}",
    f"DROP TABLE IF EXISTS {TRIGRAM}",
    f"DROP TABLE IF EXISTS {FTS}",
    f"DROP VIEW IF EXISTS {VIEW}",
]


def rebuild_sqlite(cursor: Any, *, optimize: bool = False) -> dict[str, int]:
    """Recreate what is missing and refill both indexes, on any DB-API cursor (Django's or
    sqlite3's); returns the row counts of the messages and of the trigram index."""
    for sql in SQLITE_TABLES + SQLITE_TRIGGERS_SQL + SQLITE_REBUILD:
        cursor.execute(sql)
    if optimize:  # merge the index segments
        for table in (FTS, TRIGRAM, TITLES):
            cursor.execute(f"INSERT INTO {table}({table}) VALUES('optimize')")
    counts: dict[str, int] = {}
    for table in (MESSAGES, TRIGRAM):
        cursor.execute(f"SELECT count(*) FROM {table}")
        counts[table] = int(cursor.fetchone()[0])
    return counts


# -- PostgreSQL ---------------------------------------------------------------------------------------

CONFIG = "hermes"  # the text search configuration of the index
PG_SEARCH = "knowledge_message_search"
PG_TOP = f"{PG_SEARCH}_top"
PG_REMOVED = f"{PG_SEARCH}_removed"

_PG_TOOL_ARGS = """CREATE OR REPLACE FUNCTION knowledge_tool_args(calls jsonb) RETURNS text AS $$
    SELECT coalesce((
        SELECT string_agg(coalesce(c->'function'->>'name', '') || ' ' || coalesce(c->'function'->>'arguments', ''), ' ')
        FROM jsonb_array_elements(CASE WHEN jsonb_typeof(calls) = 'array' THEN calls ELSE '[]'::jsonb END) c
    ), '')
$$ LANGUAGE sql IMMUTABLE"""

# Text in A, tool name and call arguments in B: a word a person wrote outranks one in a tool call.
_PG_VECTOR = """CREATE OR REPLACE FUNCTION knowledge_message_vector(content text, tool_name text, calls jsonb)
RETURNS tsvector AS $$
    SELECT setweight(to_tsvector('hermes', coalesce(content, '')), 'A') ||
           setweight(to_tsvector('hermes', coalesce(tool_name, '') || ' ' || knowledge_tool_args(calls)), 'B')
$$ LANGUAGE sql STABLE"""

_PG_SEARCH_TEXT = "lower(coalesce({row}.content, '') || ' ' || knowledge_tool_args({row}.tool_calls))"

_PG_SYNC = f"""CREATE OR REPLACE FUNCTION knowledge_message_search_sync() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'TRUNCATE' THEN
            TRUNCATE {PG_SEARCH};
        ELSIF TG_OP = 'DELETE' THEN
            DELETE FROM {PG_SEARCH} WHERE id = OLD.id;
        ELSE
            INSERT INTO {PG_SEARCH} (id, session_id, role, created_at, search_vector)
            VALUES (NEW.id, NEW.session_id, NEW.role, NEW.created_at,
                    knowledge_message_vector(NEW.content, NEW.tool_name, NEW.tool_calls))
            ON CONFLICT (id) DO UPDATE SET session_id = EXCLUDED.session_id, role = EXCLUDED.role,
                created_at = EXCLUDED.created_at, search_vector = EXCLUDED.search_vector;
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql"""

PG_SCHEMA = [
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
    _PG_TOOL_ARGS,
    _PG_VECTOR,
    "ALTER TABLE knowledge_message ADD COLUMN IF NOT EXISTS search_text text",
    f"""CREATE TABLE IF NOT EXISTS {PG_SEARCH} (
        id bigint PRIMARY KEY,
        session_id varchar(32) NOT NULL,
        role varchar(10) NOT NULL,
        created_at timestamp with time zone NOT NULL,
        search_vector tsvector NOT NULL
    )""",
    f"""CREATE OR REPLACE FUNCTION knowledge_message_search() RETURNS trigger AS $$
    BEGIN
        NEW.search_text := {_PG_SEARCH_TEXT.format(row="NEW")};
        RETURN NEW;
    END $$ LANGUAGE plpgsql""",
    _PG_SYNC,
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
    # The first shape kept the vector on the message row: gone from any database that had it.
    "DROP INDEX IF EXISTS knowledge_message_search_vector",
    "ALTER TABLE knowledge_message DROP COLUMN IF EXISTS search_vector",
]

# The word's list and the removal counter: `hits - (removed now - removed then)` is a lower
# bound of a word's hits (each removal takes at most one away; new messages only add hits).
PG_TOP_SCHEMA = [
    f"""CREATE TABLE IF NOT EXISTS {PG_TOP} (
        token text PRIMARY KEY,
        upto bigint NOT NULL,
        ids bigint[] NOT NULL,
        hits bigint NOT NULL,
        removed bigint NOT NULL
    )""",
    f"CREATE TABLE IF NOT EXISTS {PG_REMOVED} (id integer PRIMARY KEY CHECK (id = 1), n bigint NOT NULL)",
    f"INSERT INTO {PG_REMOVED} (id, n) VALUES (1, 0) ON CONFLICT (id) DO NOTHING",
    f"""CREATE OR REPLACE FUNCTION {PG_REMOVED}() RETURNS trigger AS $$
    BEGIN
        IF TG_OP = 'TRUNCATE' THEN
            DELETE FROM {PG_TOP};
        ELSE  -- no write for the empty updates of every insert (INSERT ... ON CONFLICT DO UPDATE)
            UPDATE {PG_REMOVED} SET n = n + gone.c FROM (SELECT count(*) AS c FROM old_rows) gone WHERE gone.c > 0;
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql""",
    f"DROP TRIGGER IF EXISTS {PG_REMOVED}_delete ON {PG_SEARCH}",
    f"""CREATE TRIGGER {PG_REMOVED}_delete AFTER DELETE ON {PG_SEARCH} REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION {PG_REMOVED}()""",
    f"DROP TRIGGER IF EXISTS {PG_REMOVED}_update ON {PG_SEARCH}",
    f"""CREATE TRIGGER {PG_REMOVED}_update AFTER UPDATE ON {PG_SEARCH} REFERENCING OLD TABLE AS old_rows
        FOR EACH STATEMENT EXECUTE FUNCTION {PG_REMOVED}()""",
    f"DROP TRIGGER IF EXISTS {PG_REMOVED}_truncate ON {PG_SEARCH}",
    f"""CREATE TRIGGER {PG_REMOVED}_truncate AFTER TRUNCATE ON {PG_SEARCH}
        FOR EACH STATEMENT EXECUTE FUNCTION {PG_REMOVED}()""",
]

# Every entry recomputed in two set-based statements (the triggers above do it row by row).
PG_REBUILD = [
    f"UPDATE knowledge_message m SET search_text = {_PG_SEARCH_TEXT.format(row='m')}",
    f"TRUNCATE {PG_SEARCH}",
    f"""INSERT INTO {PG_SEARCH} (id, session_id, role, created_at, search_vector)
        SELECT id, session_id, role, created_at, knowledge_message_vector(content, tool_name, tool_calls)
        FROM knowledge_message""",
]

# Built after the rows are in: one sort instead of a million index insertions.
PG_INDEXES = [
    f"CREATE INDEX IF NOT EXISTS knowledge_message_search_vector ON {PG_SEARCH} USING gin (search_vector)",
    "CREATE INDEX IF NOT EXISTS knowledge_message_search_trgm"
    " ON knowledge_message USING gin (search_text gin_trgm_ops)",
    f"CREATE INDEX IF NOT EXISTS {SESSIONS}_title_trgm ON {SESSIONS} USING gin (lower(title) gin_trgm_ops)",
]

# The lists before the rebuild: its TRUNCATE empties them through their trigger (they are remade after).
PG_FORWARD = PG_SCHEMA + PG_TOP_SCHEMA + PG_REBUILD + PG_INDEXES


def rebuild_postgres(cursor: Any) -> int:
    """Recreate what is missing and recompute every message's entry; returns the message count."""
    cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")  # ALTER TABLE refuses pending deferred checks
    for sql in PG_FORWARD:
        cursor.execute(sql)
    cursor.execute(f"SELECT count(*) FROM {MESSAGES}")
    return int(cursor.fetchone()[0])
