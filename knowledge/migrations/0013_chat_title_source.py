from django.db import migrations, models


class Migration(migrations.Migration):
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
