"""A real Redis/Valkey Cluster on loopback ports: one Redlock instance for tests.

:class:`LocalCluster` starts ``masters`` (and ``replicas`` per master) ``--cluster-enabled``
server processes with :class:`LocalServer`, gives the masters equal slot ranges
(``CLUSTER ADDSLOTSRANGE``), introduces them (``CLUSTER MEET``), attaches the replicas
(``CLUSTER REPLICATE``) and waits for ``cluster_state:ok`` everywhere. It can kill -9,
restart and pause one node (by PID, through its :class:`LocalServer`), move a slot to
another master (``CLUSTER SETSLOT`` + ``MIGRATE``), and stops everything on close::

    from quorumlock import Redlock
    from quorumlock.testing import LocalCluster, LocalServerGroup

    with LocalCluster(3) as cluster, LocalServerGroup(2) as servers:
        rl = Redlock([cluster.client(), *servers.urls])
        node = cluster.owner_of("orders:42")
        cluster.kill(node)

Like ``LocalServer(fresh=True)``, a brand-new cluster's incarnation markers (one per
slot) are stamped, so that its first use starts no restart quarantine. The cluster runs
with ``cluster-require-full-coverage no``: a master that is down costs the keys of its
slots only, not the whole cluster.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Final, Self

import redis
import redis.asyncio.cluster
import redis.cluster

from quorumlock._algorithm.cluster import SLOTS, key_slot
from quorumlock._io.incarnation import stamp_fresh_slots
from quorumlock.testing._servers import (
    LocalServer,
    ServerStartError,
    StrPath,
    _loopback_address,
    _pick_free_port,
    find_server_binary,
)

__all__ = ["LocalCluster"]

_DEFAULT_TIMEOUT: Final = 30.0
#: Tries to start a node whose cluster bus port was taken after it was picked.
_BUS_PORT_ATTEMPTS: Final = 3
_POLL: Final = 0.05


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class LocalCluster:
    """A cluster of real ``--cluster-enabled`` server processes on a loopback address.

    Args:
        masters: how many masters share the 16384 slots (equal ranges, in order).
        replicas: replicas per master (``CLUSTER REPLICATE``; a failover promotes one
            when its master has been unreachable for ``node_timeout`` ms).
        host: the loopback address every node binds.
        directory: parent of one ``node-<i>`` directory per node (default: a private
            temp dir each, removed by :meth:`close`).
        appendonly, appendfsync: persistence of every node (see :class:`LocalServer`).
        node_timeout: ``cluster-node-timeout`` in ms.
        fresh: stamp the incarnation markers of a brand-new cluster (see
            ``LocalServer(fresh=True)``) so that its first use starts no quarantine.
        extra_args: further command-line arguments of every node.
        binary: the server binary; default: :func:`find_server_binary`.

    Raises:
        ValueError: ``masters`` < 1, ``replicas`` < 0, ``node_timeout`` < 1, or an invalid
            server option.
        TypeError: ``masters``, ``replicas`` or ``node_timeout`` is not an int.
        ServerBinaryNotFound: no ``binary`` given and none can be found.
    """

    def __init__(
        self,
        masters: int = 3,
        *,
        replicas: int = 0,
        host: str = "127.0.0.1",
        directory: StrPath | None = None,
        appendonly: bool = False,
        appendfsync: str = "everysec",
        node_timeout: int = 2000,
        fresh: bool = True,
        extra_args: Sequence[str] = (),
        binary: StrPath | None = None,
    ) -> None:
        for option, value, least in (
            ("masters", masters, 1),
            ("replicas", replicas, 0),
            ("node_timeout", node_timeout, 1),
        ):
            if not isinstance(value, int) or isinstance(value, bool):
                raise TypeError(f"{option} must be an int, not {value!r}")
            if value < least:
                raise ValueError(f"{option} must be >= {least}, not {value}")
        if isinstance(extra_args, str):
            raise TypeError("extra_args must be a sequence of strings, not a string")
        # Checked before the bus ports are bound on it (the nodes would check it later).
        loopback = str(_loopback_address(host))
        resolved = Path(binary) if binary is not None else find_server_binary()
        cluster_args = (
            "--cluster-enabled",
            "yes",
            "--cluster-config-file",
            "nodes.conf",
            "--cluster-node-timeout",
            str(node_timeout),
            "--cluster-require-full-coverage",
            "no",
            "--cluster-replica-validity-factor",
            "0",  # a replica may always take over: failovers in tests do not stall
        )
        count = masters * (1 + replicas)
        args = list(extra_args)
        self._password: str | None = None
        if "--requirepass" in args[:-1]:
            self._password = args[args.index("--requirepass") + 1]
        self._masters = masters
        self._replicas = replicas
        self._fresh = fresh
        # The cluster bus listens on a port of its own, picked here (the default, port +
        # 10000, fails for the high ports the kernel hands out).
        self._bus_ports = [_pick_free_port(loopback) for _ in range(count)]
        self._nodes: tuple[LocalServer, ...] = tuple(
            LocalServer(
                host=host,
                directory=None if directory is None else Path(directory) / f"node-{i}",
                appendonly=appendonly,
                appendfsync=appendfsync,
                extra_args=(
                    *cluster_args,
                    "--cluster-port",
                    str(self._bus_ports[i]),
                    *extra_args,
                ),
                binary=resolved,
                fresh=False,  # markers are per slot here: stamped by start()
            )
            for i in range(count)
        )

    # ---- what is there ---------------------------------------------------------------

    @property
    def nodes(self) -> tuple[LocalServer, ...]:
        """Every node: the initial masters first, then the replicas (master 0's first)."""
        return self._nodes

    @property
    def urls(self) -> list[str]:
        """``redis://`` URLs of every node."""
        return [node.url for node in self._nodes]

    def client(self, **options: Any) -> redis.cluster.RedisCluster:
        """A new sync ``RedisCluster`` client started from a running node; close it.

        With ``--requirepass`` among ``extra_args`` it uses that password unless
        ``options`` say otherwise.
        """
        node = self._running()[0]
        options.setdefault("password", self._password)
        return redis.cluster.RedisCluster(host=node.host, port=node.port, **options)

    def async_client(self, **options: Any) -> redis.asyncio.cluster.RedisCluster:
        """A new ``redis.asyncio.cluster.RedisCluster`` client (connects lazily)."""
        node = self._running()[0]
        options.setdefault("password", self._password)
        return redis.asyncio.cluster.RedisCluster(host=node.host, port=node.port, **options)

    def node_client(self, node: LocalServer) -> redis.Redis:
        """A plain client of one node (no redirections followed); close it."""
        return redis.Redis(
            host=node.host, port=node.port, password=self._password, socket_timeout=5
        )

    def node_id(self, node: LocalServer) -> str:
        """The cluster node id of ``node`` (``CLUSTER MYID``)."""
        return _text(self._command(node, "CLUSTER", "MYID"))

    def slot_map(self) -> dict[int, LocalServer]:
        """Which node serves each assigned slot, as a running node sees it."""
        by_port = {node.port: node for node in self._nodes}
        reply = self._command(self._running()[0], "CLUSTER", "SLOTS")
        owners: dict[int, LocalServer] = {}
        assert isinstance(reply, list)
        for entry in reply:
            first, last, master = int(entry[0]), int(entry[1]), entry[2]
            node = by_port[int(master[1])]
            for slot in range(first, last + 1):
                owners[slot] = node
        return owners

    def owner(self, slot: int) -> LocalServer:
        """The master that serves ``slot``.

        Raises:
            LookupError: no master serves it.
        """
        owners = self.slot_map()
        if slot not in owners:
            raise LookupError(f"slot {slot} has no master")
        return owners[slot]

    def owner_of(self, key: str) -> LocalServer:
        """The master that serves ``key``'s slot."""
        return self.owner(key_slot(key))

    def masters(self) -> list[LocalServer]:
        """The nodes that serve at least one slot, in node order."""
        serving = set(self.slot_map().values())
        return [node for node in self._nodes if node in serving]

    # ---- lifecycle -------------------------------------------------------------------

    def _start_node(self, i: int) -> None:
        """Start node ``i``. Its bus port was free when picked, but the kernel hands the
        same range out to outgoing connections: one taken since is picked again (a few
        times) rather than failing the start."""
        node = self._nodes[i]
        for attempt in range(_BUS_PORT_ATTEMPTS):
            try:
                node.start()
                return
            except ServerStartError as exc:
                taken = f":{self._bus_ports[i]}: bind" in exc.log_tail
                if not taken or attempt + 1 == _BUS_PORT_ATTEMPTS:
                    raise
            old, self._bus_ports[i] = self._bus_ports[i], _pick_free_port(node.host.strip("[]"))
            node._replace_arg("--cluster-port", str(old), str(self._bus_ports[i]))

    def start(self, *, timeout: float = _DEFAULT_TIMEOUT) -> None:
        """Start every node, form the cluster, wait for ``cluster_state:ok``, stamp.

        Raises:
            ServerStartError: a node could not start.
            TimeoutError: the cluster was not formed within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        try:
            for i, node in enumerate(self._nodes):
                if not node.running:
                    self._start_node(i)
                continue
            masters = self._nodes[: self._masters]
            step = SLOTS // self._masters
            for i, node in enumerate(masters):
                first = i * step
                last = SLOTS - 1 if i == self._masters - 1 else first + step - 1
                self._command(node, "CLUSTER", "ADDSLOTSRANGE", first, last)
            head, bus = self._nodes[0], self._bus_ports[0]
            for node in self._nodes[1:]:
                self._command(node, "CLUSTER", "MEET", head.host, head.port, bus)
            self._wait(self._everyone_knows_everyone, deadline, "the nodes to meet")
            for r in range(self._replicas):
                for m, master in enumerate(masters):
                    replica = self._nodes[self._masters * (1 + r) + m]
                    self._command(replica, "CLUSTER", "REPLICATE", self.node_id(master))
            self.wait_ok(timeout=max(0.1, deadline - time.monotonic()))
            if self._fresh:
                self._fresh = False
                self._stamp()
        except BaseException:
            self.close()
            raise

    def wait_ok(self, nodes: Sequence[LocalServer] | None = None, *, timeout: float = 30.0) -> None:
        """Wait until every running node of ``nodes`` (default: all) reports
        ``cluster_state:ok`` and agrees on who serves every slot.

        Raises:
            TimeoutError: not within ``timeout`` seconds.
        """
        deadline = time.monotonic() + timeout
        chosen = list(nodes) if nodes is not None else list(self._nodes)

        def ok() -> bool:
            views = []
            for node in chosen:
                if not node.running or node.paused:
                    continue
                info = self._info(node)
                if info.get("cluster_state") != "ok":
                    return False
                views.append(self._masters_seen_by(node))
            replicas_up = all(
                self._replica_synced(node)
                for node in self._nodes[self._masters :]
                if node.running and not node.paused
            )
            return len(set(views)) <= 1 and replicas_up

        self._wait(ok, deadline, "cluster_state:ok")

    def kill(self, node: LocalServer) -> None:
        """``kill -9`` one node (by its PID). Its slots fail until it is back or a replica
        of it has taken over."""
        node.kill()

    def restart(self, node: LocalServer, *, timeout: float = _DEFAULT_TIMEOUT) -> None:
        """Kill -9 ``node`` and start it again (same port and directory: it rejoins with
        its ``nodes.conf``; without persistence its data is gone), then wait for the
        cluster to be ok.

        Raises:
            ServerStartError: the node did not start again.
            TimeoutError: the cluster was not ok within ``timeout`` seconds.
        """
        node.restart()
        self.wait_ok(timeout=timeout)

    def pause(self, node: LocalServer) -> None:
        """SIGSTOP one node."""
        node.pause()

    def resume(self, node: LocalServer) -> None:
        """SIGCONT one node."""
        node.resume()

    def move_slot(self, slot: int, target: LocalServer, *, timeout: float = 10.0) -> None:
        """Move ``slot`` and its keys to the master ``target`` (``CLUSTER SETSLOT
        IMPORTING/MIGRATING``, ``MIGRATE`` of every key, ``CLUSTER SETSLOT NODE``), as
        ``valkey-cli --cluster reshard`` does. Keys keep their ttl.

        Raises:
            ValueError: ``target`` already serves ``slot``.
            LookupError: no master serves ``slot``.
            TimeoutError: the slot's keys or the cluster's state did not settle within
                ``timeout`` seconds.
        """
        source = self.owner(slot)
        if source is target:
            raise ValueError(f"slot {slot} is already served by {target.url}")
        source_id, target_id = self.node_id(source), self.node_id(target)
        self._command(target, "CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
        self._command(source, "CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
        deadline = time.monotonic() + timeout
        while True:
            keys = self._command(source, "CLUSTER", "GETKEYSINSLOT", slot, 100)
            assert isinstance(keys, list)
            if not keys:
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"slot {slot} still had keys after {timeout:g} s")
            self._command(source, "MIGRATE", target.host, target.port, "", 0, 5000, "KEYS", *keys)
        for node in (target, source, *self.masters()):
            self._command(node, "CLUSTER", "SETSLOT", slot, "NODE", target_id)
        self.wait_ok(timeout=timeout)

    def close(self) -> None:
        """Stop every node and remove the private directories. Idempotent."""
        errors: list[Exception] = []
        for node in self._nodes:
            try:
                node.close()
            except Exception as exc:
                errors.append(exc)
        if errors:
            raise errors[0]

    def __enter__(self) -> Self:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> Iterator[LocalServer]:
        return iter(self._nodes)

    def __len__(self) -> int:
        return len(self._nodes)

    def __repr__(self) -> str:
        return f"<LocalCluster {self._masters} masters, {self._replicas} replicas each>"

    # ---- internals -------------------------------------------------------------------

    def _running(self) -> list[LocalServer]:
        running = [node for node in self._nodes if node.running and not node.paused]
        if not running:
            raise RuntimeError("no node of the cluster is running")
        return running

    def _command(self, node: LocalServer, *args: str | int) -> object:
        client = self.node_client(node)
        try:
            return client.execute_command(*args)  # type: ignore[no-untyped-call]
        finally:
            client.close()

    def _info(self, node: LocalServer) -> dict[str, str]:
        raw = self._command(node, "CLUSTER", "INFO")
        if isinstance(raw, dict):
            return {_text(k): _text(v) for k, v in raw.items()}
        pairs = (line.partition(":") for line in _text(raw).splitlines())
        return {key: value.strip() for key, _, value in pairs if key}

    def _masters_seen_by(self, node: LocalServer) -> tuple[tuple[int, int, int], ...]:
        reply = self._command(node, "CLUSTER", "SLOTS")
        assert isinstance(reply, list)
        return tuple(sorted((int(e[0]), int(e[1]), int(e[2][1])) for e in reply))

    def _everyone_knows_everyone(self) -> bool:
        count = str(len(self._nodes))
        return all(self._info(node).get("cluster_known_nodes") == count for node in self._nodes)

    def _replica_synced(self, node: LocalServer) -> bool:
        client = self.node_client(node)
        try:
            info = client.info("replication")
        finally:
            client.close()
        return info.get("role") == "master" or info.get("master_link_status") == "up"

    def _stamp(self) -> None:
        for node, slots in self._slots_by_master().items():
            client = self.node_client(node)
            try:
                stamp_fresh_slots(client, slots)
            finally:
                client.close()

    def _slots_by_master(self) -> dict[LocalServer, list[int]]:
        by_master: dict[LocalServer, list[int]] = {}
        for slot, node in self.slot_map().items():
            by_master.setdefault(node, []).append(slot)
        return by_master

    @staticmethod
    def _wait(ready: Callable[[], bool], deadline: float, what: str) -> None:
        while True:
            with contextlib.suppress(redis.exceptions.ConnectionError):
                if ready():
                    return
            if time.monotonic() > deadline:
                raise TimeoutError(f"the cluster did not reach {what} in time")
            time.sleep(_POLL)
