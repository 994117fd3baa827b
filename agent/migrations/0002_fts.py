"""The full-text search index over messages was created here while messages belonged to this app.

Since the conversation models moved to `knowledge`, the index is created by
knowledge 0003_search_index over the renamed table, and agent 0003 drops the objects this
migration created in databases that already ran it; a new database has nothing to create here.
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("agent", "0002_session_context")]

    operations: list[migrations.operations.base.Operation] = []
