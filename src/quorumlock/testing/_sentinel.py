"""Real Sentinel processes (``valkey-server --sentinel`` / ``redis-server --sentinel``).

:class:`LocalSentinel` is a :class:`LocalServer` whose process runs in sentinel mode from
a configuration file in its directory (sentinel mode needs one: it rewrites it with what
it learns). It monitors one master under one name, with short timeouts so that tests
see a failover within seconds. Everything else (free ports, kill -9, the atexit safety
net, bounded waits) is :class:`LocalServer`'s.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Final

import redis

from quorumlock.testing._servers import LocalServer, StrPath

__all__ = ["LocalSentinel"]

_CONFIG_NAME: Final = "sentinel.conf"


class LocalSentinel(LocalServer):
    """A sentinel on a loopback port that monitors the master ``master_host:master_port``
    under ``name``.

    ``quorum`` sentinels must agree that the master is down before a failover;
    ``down_after`` (seconds without an answer) and ``failover_timeout`` are short by
    default. Several sentinels of one master find each other through the master.

    ::

        with LocalServer() as master, LocalSentinel(master.host, master.port) as sentinel:
            client = Sentinel([(sentinel.host, sentinel.port)]).master_for("mymaster")

    Raises:
        ValueError: as :class:`LocalServer`, ``quorum`` < 1, or ``down_after`` or
            ``failover_timeout`` not finite and > 0.
        TypeError: as :class:`LocalServer`, ``quorum`` not an int, or ``down_after`` or
            ``failover_timeout`` not a number.
    """

    def __init__(
        self,
        master_host: str,
        master_port: int,
        *,
        name: str = "mymaster",
        quorum: int = 1,
        down_after: float = 1.0,
        failover_timeout: float = 5.0,
        host: str = "127.0.0.1",
        port: int | None = None,
        directory: StrPath | None = None,
        binary: StrPath | None = None,
    ) -> None:
        if not isinstance(quorum, int) or isinstance(quorum, bool):
            raise TypeError(f"quorum must be an int, not {quorum!r}")
        if quorum < 1:
            raise ValueError(f"quorum must be >= 1, not {quorum}")
        for option, seconds in (("down_after", down_after), ("failover_timeout", failover_timeout)):
            if not isinstance(seconds, int | float) or isinstance(seconds, bool):
                raise TypeError(f"{option} must be a number of seconds, not {seconds!r}")
            if not 0 < seconds < math.inf:
                raise ValueError(f"{option} must be finite and > 0, not {seconds}")
        super().__init__(host=host, port=port, directory=directory, binary=binary, fresh=False)
        self._master = (master_host, master_port)
        self._name = name
        self._quorum = quorum
        self._down_after_ms = max(1, int(down_after * 1000))
        self._failover_timeout_ms = max(1, int(failover_timeout * 1000))

    @property
    def name(self) -> str:
        """The name the master is monitored under (``master_for(name)``)."""
        return self._name

    @property
    def config_path(self) -> Path:
        """The configuration file (written at the first start, then the sentinel's)."""
        return self.directory / _CONFIG_NAME

    def command_line(self) -> list[str]:
        """``<binary> <config file> --sentinel --port <port>``: the rest is in the file.
        The port is given here too, over the file's: an automatic port lost to another
        process is picked anew for the next attempt (:meth:`LocalServer.start`), after
        the file was written."""
        return [str(self.binary), str(self.config_path), "--sentinel", "--port", str(self.port)]

    def start(self, *, timeout: float = 10.0) -> None:
        """Write the configuration (first start only), start, and wait for PING.

        Raises:
            RuntimeError, ServerStartError: as :meth:`LocalServer.start`.
        """
        directory = self.directory
        directory.mkdir(parents=True, exist_ok=True)
        if not self.config_path.exists():
            host, port = self._master
            self.config_path.write_text(
                "\n".join(
                    [
                        f"port {self.port}",
                        f"bind {self.host}",
                        f"dir {directory}",
                        f"logfile {self.log_path}",
                        "daemonize no",
                        f"sentinel monitor {self._name} {host} {port} {self._quorum}",
                        f"sentinel down-after-milliseconds {self._name} {self._down_after_ms}",
                        f"sentinel failover-timeout {self._name} {self._failover_timeout_ms}",
                        f"sentinel parallel-syncs {self._name} 1",
                        "",
                    ]
                )
            )
        super().start(timeout=timeout)

    def client(self) -> redis.Redis:
        """A client of the sentinel itself (for SENTINEL commands)."""
        return redis.Redis(host=self.host, port=self.port, socket_timeout=2.0)

    def master_address(self) -> tuple[str, int] | None:
        """``SENTINEL GET-MASTER-ADDR-BY-NAME``: where the sentinel sees the master."""
        client = self.client()
        try:
            reply = client.execute_command(  # type: ignore[no-untyped-call]
                "SENTINEL", "GET-MASTER-ADDR-BY-NAME", self._name
            )
        finally:
            client.close()
        if not reply:
            return None
        host, port = reply
        return (host.decode() if isinstance(host, bytes) else str(host), int(port))

    def replicas(self) -> list[dict[str, str]]:
        """``SENTINEL REPLICAS``: the replicas the sentinel knows, with their flags."""
        client = self.client()
        try:
            reply = client.execute_command("SENTINEL", "REPLICAS", self._name)  # type: ignore[no-untyped-call]
        finally:
            client.close()
        return [_as_text(entry) for entry in reply]

    def failover(self) -> None:
        """``SENTINEL FAILOVER``: promote a replica now, without asking other sentinels."""
        client = self.client()
        try:
            client.execute_command("SENTINEL", "FAILOVER", self._name)  # type: ignore[no-untyped-call]
        finally:
            client.close()

    def wait_for_replicas(self, count: int, *, timeout: float = 15.0) -> None:
        """Until the sentinel knows ``count`` healthy replicas (it needs one to fail over).

        Raises:
            TimeoutError: not within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        while True:
            healthy = [
                r
                for r in self.replicas()
                if not ({"s_down", "o_down", "disconnected"} & set(r.get("flags", "").split(",")))
                and r.get("master-link-status") == "ok"
            ]
            if len(healthy) >= count:
                return
            if time.monotonic() >= deadline:
                raise TimeoutError(f"the sentinel saw {len(healthy)} of {count} replicas")
            time.sleep(0.05)


def _as_text(entry: object) -> dict[str, str]:
    """A SENTINEL reply entry (a flat list, or a dict with RESP3) as a dict of str."""

    def text(value: object) -> str:
        return value.decode() if isinstance(value, bytes) else str(value)

    if isinstance(entry, dict):
        return {text(k): text(v) for k, v in entry.items()}
    assert isinstance(entry, list | tuple)
    items = [text(x) for x in entry]
    return dict(zip(items[::2], items[1::2], strict=False))
