"""ChatSession.parent linked a fork to the chat it came from; 0020_fold_forks folded every
fork back into its chat, so nothing is linked any more.

A migration of its own: on PostgreSQL a table cannot be altered in the transaction that just
changed its rows under deferred foreign keys ("pending trigger events").
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0020_fold_forks")]

    operations = [migrations.RemoveField(model_name="chatsession", name="parent")]
