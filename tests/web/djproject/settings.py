"""Settings of the Django project the tests of quorumlock.django run (sqlite)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

SECRET_KEY = "tests-only"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "127.0.0.1"]
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "quorumlock.django",
    "tests.web.djproject.billing",
]
ROOT_URLCONF = "tests.web.djproject.urls"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get(
            "DJPROJECT_DB", str(Path(tempfile.gettempdir()) / "quorumlock-djproject.sqlite3")
        ),
        "OPTIONS": {"timeout": 30},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
QUORUMLOCK = {
    "SERVERS": os.environ.get("QUORUMLOCK_SERVERS", "redis://127.0.0.1:6379").split(","),
    "MAX_TTL": 60,
}
