"""The Django app ``quorumlock.django``: registers the system checks, provides the
``locked`` management command."""

from __future__ import annotations

from django.apps import AppConfig
from django.core import checks

from quorumlock.django._checks import check_servers, check_settings


class QuorumLockConfig(AppConfig):
    name = "quorumlock.django"
    label = "quorumlock"
    verbose_name = "quorumlock"

    def ready(self) -> None:
        checks.register(check_settings, "quorumlock")
        checks.register(check_servers, "quorumlock", deploy=True)
