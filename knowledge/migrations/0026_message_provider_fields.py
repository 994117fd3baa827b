"""Message.provider_fields: fields a server put on its reply that must go back with it.

OpenRouter's `reasoning_details` (signed or encrypted reasoning that Claude and Gemini refuse a
tool-call follow-up without) and a message-level `extra_content` are kept with the reply and sent
back, also after a restart. A plain ADD COLUMN, as in 0009: SQLite's AddField rebuilds the table,
which the full-text triggers over knowledge_message do not survive.
"""

from django.db import migrations, models

SQLITE = (
    "ALTER TABLE knowledge_message ADD COLUMN provider_fields text NULL"
    ' CHECK ((JSON_VALID("provider_fields") OR "provider_fields" IS NULL))'
)
POSTGRES = "ALTER TABLE knowledge_message ADD COLUMN provider_fields jsonb NULL"


def add_column(apps, schema_editor):
    schema_editor.execute(SQLITE if schema_editor.connection.vendor == "sqlite" else POSTGRES)


def drop_column(apps, schema_editor):
    schema_editor.execute("ALTER TABLE knowledge_message DROP COLUMN provider_fields")


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0025_attachment_session"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[migrations.RunPython(add_column, drop_column)],
            state_operations=[
                migrations.AddField(
                    model_name="message",
                    name="provider_fields",
                    field=models.JSONField(blank=True, null=True),
                )
            ],
        )
    ]
