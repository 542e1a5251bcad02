"""Real-server process kit for tests, benchmarks, the CLI demo and fault injection.

Starts genuine ``redis-server``/``valkey-server`` processes on free loopback ports and
can ``kill -9``, pause (SIGSTOP), resume (SIGCONT) and restart them::

    from quorumlock.testing import LocalServerGroup

    with LocalServerGroup(5) as servers:
        servers[0].kill()
        servers[1].pause()
        ...
"""

from quorumlock.testing._servers import (
    LocalServer,
    LocalServerGroup,
    ServerBinaryNotFound,
    ServerStartError,
    find_server_binary,
)

__all__ = [
    "LocalServer",
    "LocalServerGroup",
    "ServerBinaryNotFound",
    "ServerStartError",
    "find_server_binary",
]
