from django.db import migrations, models


class Migration(migrations.Migration):
    # Its name until it lost the ticket number: a database that ran it under that name has run this.
    replaces = [("knowledge", "0013_chat_title_source_issue13")]
    dependencies = [
        ("knowledge", "0012_search_top"),
    ]

    operations = [
        migrations.AddField(
            model_name="chatsession",
            name="title_source",
            field=models.CharField(blank=True, default="", max_length=10),
        ),
    ]
