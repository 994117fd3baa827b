"""First step of moving the conversation models to the `knowledge` app (which owns every record).

The search index of agent 0002_fts names `agent_message` in its view and triggers, so it is
dropped here and created again over the renamed table by knowledge 0003_search_index. The three
tables are renamed in place, so every row (and every foreign key to them) is kept.
"""

from django.db import migrations

DROP_SEARCH_INDEX = [
    "DROP TRIGGER IF EXISTS agent_message_search_ai",
    "DROP TRIGGER IF EXISTS agent_message_search_bd",
    "DROP TRIGGER IF EXISTS agent_message_search_ad",
    "DROP TRIGGER IF EXISTS agent_message_search_bu",
    "DROP TRIGGER IF EXISTS agent_message_search_au",
    "DROP TABLE IF EXISTS agent_message_trigram",
    "DROP TABLE IF EXISTS agent_message_fts",
    "DROP VIEW IF EXISTS agent_message_search_src",
]


def drop_search_index(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":  # the index never existed elsewhere
        for sql in DROP_SEARCH_INDEX:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("agent", "0002_fts"), ("knowledge", "0001_initial")]

    operations = [
        migrations.RunPython(drop_search_index, migrations.RunPython.noop),
        migrations.AlterModelTable(name="chatsession", table="knowledge_chatsession"),
        migrations.AlterModelTable(name="message", table="knowledge_message"),
        migrations.AlterModelTable(name="reviewrun", table="knowledge_reviewrun"),
    ]
