"""Versions in place: each message follows a parent, and the chat remembers the version it shows
(`Message.parent`, `ChatSession.leaf`, and `ChatSession.revision` for changes no new message shows).
0020_fold_forks fills them from the chats of before.

SQLite's AddField rebuilds the message table, which the full-text view and triggers over it
(0003_search_index) do not survive; a plain ADD COLUMN keeps them.
"""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0018_pending_conflict_entry")]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    [
                        "ALTER TABLE knowledge_message ADD COLUMN parent_id bigint NULL"
                        " REFERENCES knowledge_message (id) DEFERRABLE INITIALLY DEFERRED",
                        "CREATE INDEX knowledge_message_parent_id_idx ON knowledge_message (parent_id)",
                    ],
                    reverse_sql=[
                        "DROP INDEX knowledge_message_parent_id_idx",
                        "ALTER TABLE knowledge_message DROP COLUMN parent_id",
                    ],
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="message",
                    name="parent",
                    field=models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=models.deletion.SET_NULL,
                        related_name="+",
                        to="knowledge.message",
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="chatsession",
            name="leaf",
            field=models.ForeignKey(
                blank=True, null=True, on_delete=models.deletion.SET_NULL, related_name="+", to="knowledge.message"
            ),
        ),
        migrations.AddField(
            model_name="chatsession", name="revision", field=models.PositiveIntegerField(default=0)
        ),
    ]
