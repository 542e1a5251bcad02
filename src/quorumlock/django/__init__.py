"""Django: one Redlock per process from settings, a decorator and a mixin that hold a lock
for a view or a function, ``manage.py locked NAME -- COMMAND``, and system checks that
audit the servers (docs/django.md).

::

    # settings.py
    INSTALLED_APPS = [..., "quorumlock.django"]
    QUORUMLOCK = {"SERVERS": ["redis://a:6379", "redis://b:6379", "redis://c:6379"]}

    # views.py
    from quorumlock.django import locked

    @locked("invoice:{pk}", ttl=30, timeout=5)
    def pay_invoice(request, pk): ...

Django is imported only when this package is.
"""

from __future__ import annotations

from quorumlock.django._locking import LockedViewMixin, locked
from quorumlock.django._redlock import close_redlock, get_redlock, redlock_settings

__all__ = ["LockedViewMixin", "close_redlock", "get_redlock", "locked", "redlock_settings"]
