"""Last step of the move: the `agent` app no longer has models (its tables belong to `knowledge`)."""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("agent", "0003_tables_to_knowledge"), ("knowledge", "0002_conversations")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.DeleteModel(name="Message"),
                migrations.DeleteModel(name="ReviewRun"),
                migrations.DeleteModel(name="ChatSession"),
            ]
        )
    ]
