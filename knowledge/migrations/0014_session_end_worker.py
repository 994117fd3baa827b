from django.db import migrations, models


class Migration(migrations.Migration):
    # Its name until it lost the ticket number: a database that ran it under that name has run this.
    replaces = [("knowledge", "0014_session_end_worker_issue18")]
    dependencies = [
        ("knowledge", "0013_chat_title_source"),
    ]

    operations = [
        migrations.AddField(
            model_name="chatsession",
            name="end_worker",
            field=models.CharField(blank=True, default="", max_length=200),
        ),
    ]
