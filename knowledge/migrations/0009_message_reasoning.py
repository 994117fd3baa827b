"""Message.reasoning: the model's thinking stored with its reply.

SQLite's AddField rebuilds the table, which the full-text view and triggers over
knowledge_message (0003_search_index) do not survive; a plain ADD COLUMN keeps them and is
what the state change means.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0008_model_capabilities"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE knowledge_message ADD COLUMN reasoning text NOT NULL DEFAULT ''",
                    reverse_sql="ALTER TABLE knowledge_message DROP COLUMN reasoning",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="message",
                    name="reasoning",
                    field=models.TextField(blank=True, default=""),
                )
            ],
        )
    ]
