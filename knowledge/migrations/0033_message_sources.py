from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("knowledge", "0032_recall_vectors"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="sources",
            field=models.JSONField(blank=True, null=True),
        ),
    ]
