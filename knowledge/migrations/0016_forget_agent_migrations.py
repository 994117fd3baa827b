"""The `agent` app has no migrations any more (it has no models; its tables became knowledge's in
0001 and 0002): the records of the ones it had are removed, so that a migration the app may get one
day under an old name (`0001_initial`) is not taken as already applied."""

from django.db import migrations
from django.db.migrations.recorder import MigrationRecorder


def forget(apps, schema_editor):
    MigrationRecorder(schema_editor.connection).migration_qs.filter(app="agent").delete()


class Migration(migrations.Migration):
    dependencies = [("knowledge", "0015_search_top_postgres")]

    operations = [migrations.RunPython(forget, migrations.RunPython.noop)]
