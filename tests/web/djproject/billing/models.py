from __future__ import annotations

from django.db import models


class Invoice(models.Model):
    count: models.IntegerField[int, int] = models.IntegerField(default=0)
