from __future__ import annotations

from django.db import migrations, models


class Migration(migrations.Migration):
    initial = True
    dependencies = []  # noqa: RUF012 (Django's own shape for a migration)
    operations = [  # noqa: RUF012
        migrations.CreateModel(
            name="Invoice",
            fields=[
                ("id", models.AutoField(primary_key=True, serialize=False)),
                ("count", models.IntegerField(default=0)),
            ],
        ),
    ]
