"""Settings of the example project: the QUORUMLOCK setting and the quorumlock.django app."""

import os
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = os.environ.get("SECRET_KEY", "example-only")
DEBUG = True
ALLOWED_HOSTS = ["localhost", "127.0.0.1", "testserver"]
INSTALLED_APPS = [
    "django.contrib.contenttypes",
    "quorumlock.django",  # the `locked` command and the system checks
    "shop",
]
MIDDLEWARE = ["django.middleware.common.CommonMiddleware"]
ROOT_URLCONF = "shop.urls"
DATABASES = {
    "default": {
        "ENGINE": "django.db.backends.sqlite3",
        "NAME": os.environ.get("SHOP_DB", str(BASE_DIR / "db.sqlite3")),
        "OPTIONS": {"timeout": 30},
    }
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True

# One Redlock per process, built on first use from this: "SERVERS", and any keyword
# option of quorumlock.Redlock in upper case.
QUORUMLOCK = {
    "SERVERS": os.environ["QUORUMLOCK_SERVERS"].split(","),
    "MAX_TTL": 60,
}
