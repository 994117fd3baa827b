from django.db import migrations, models


class Migration(migrations.Migration):
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
