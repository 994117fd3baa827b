"""Databases made while the conversations belonged to the `agent` app are brought to 0001's shape.

The `agent` app's migrations (gone: that app has no models) created `agent_chatsession`,
`agent_message` and `agent_reviewrun`, an FTS5 index over `agent_message` and three context
columns of a session. A database that has those tables gets them renamed in place, so every row
and every foreign key to them is kept; the index names follow, and the admin's content types. A
new database (0001 made the tables) has nothing to do here. Each step looks at the database
itself, so one where the old steps stopped half-way is completed too.
"""

from django.db import migrations, models

# The agent app's search index names `agent_message` in its view and triggers: dropped before the
# rename (SQLite refuses to rename a table that a view names); knowledge 0003 makes the new one.
AGENT_SEARCH_INDEX = [
    "DROP TRIGGER IF EXISTS agent_message_search_ai",
    "DROP TRIGGER IF EXISTS agent_message_search_bd",
    "DROP TRIGGER IF EXISTS agent_message_search_ad",
    "DROP TRIGGER IF EXISTS agent_message_search_bu",
    "DROP TRIGGER IF EXISTS agent_message_search_au",
    "DROP TABLE IF EXISTS agent_message_trigram",
    "DROP TABLE IF EXISTS agent_message_fts",
    "DROP VIEW IF EXISTS agent_message_search_src",
]
TABLES = [("chatsession", "agent_chatsession"), ("message", "agent_message"), ("reviewrun", "agent_reviewrun")]
INDEXES = [
    ("chatsession", ["-updated_at"], "agent_chats_updated_abb2f9_idx", "knowledge_c_updated_6285d7_idx"),
    ("message", ["session", "id"], "agent_messa_session_57c00d_idx", "knowledge_m_session_849efb_idx"),
]
# Added by the agent app's second migration; a database made before it lacks them.
CONTEXT_COLUMNS = {
    "context_cut_to": "bigint NULL",
    "context_head_to": "bigint NULL",
    "context_summary": "text NOT NULL DEFAULT ''",
}


def _tables(connection):
    with connection.cursor() as cur:
        return set(connection.introspection.table_names(cur, include_views=True))


def adopt_agent_tables(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor == "sqlite":
        for sql in AGENT_SEARCH_INDEX:
            schema_editor.execute(sql)
    tables = _tables(connection)
    for model_name, old in TABLES:
        model = apps.get_model("knowledge", model_name)
        if old in tables and model._meta.db_table not in tables:
            schema_editor.alter_db_table(model, old, model._meta.db_table)
    session = apps.get_model("knowledge", "ChatSession")
    with connection.cursor() as cur:
        columns = {c.name for c in connection.introspection.get_table_description(cur, session._meta.db_table)}
    for name, column in CONTEXT_COLUMNS.items():
        if name not in columns:
            schema_editor.execute(f"ALTER TABLE {session._meta.db_table} ADD COLUMN {name} {column}")
    for model_name, fields, old, new in INDEXES:
        model = apps.get_model("knowledge", model_name)
        with connection.cursor() as cur:
            names = set(connection.introspection.get_constraints(cur, model._meta.db_table))
        if old in names and new not in names:
            schema_editor.rename_index(model, models.Index(fields=fields, name=old), models.Index(fields=fields, name=new))


def content_types_follow(apps, schema_editor):
    """Admin history and permissions of the moved models keep pointing at them."""
    content_type = apps.get_model("contenttypes", "ContentType")
    names = ["chatsession", "message", "reviewrun"]
    if not content_type.objects.filter(app_label="knowledge", model__in=names).exists():
        content_type.objects.filter(app_label="agent", model__in=names).update(app_label="knowledge")


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0001_initial"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(adopt_agent_tables, migrations.RunPython.noop),
        migrations.RunPython(content_types_follow, migrations.RunPython.noop),
    ]
