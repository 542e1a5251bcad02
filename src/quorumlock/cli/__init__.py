"""The ``quorumlock`` command line tool.

::

    quorumlock demo                              # 5 local servers, contending workers, a crash
    quorumlock run NAME [--ttl S] [--wait S] -- CMD [ARGS...]   # flock(1) across machines
    quorumlock status NAME                       # who holds NAME, on every server
    quorumlock doctor                            # audit the servers
    quorumlock servers start --count N / stop    # local development servers
    quorumlock bench / verify                    # benchmark, fault-injection checker

Servers come from ``--servers URL,URL,...`` or ``$QUORUMLOCK_SERVERS``. See docs/cli.md.
"""

from quorumlock.cli._app import main

__all__ = ["main"]
