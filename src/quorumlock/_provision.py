"""Provisioning on purpose: mark brand-new, empty servers as new.

A server without the incarnation marker looks like one that lost its data, and its first
use starts a restart quarantine (unless it has been up for ``max_ttl``: see
docs/safety.md, B1). :func:`provision` is the deployment step that says "these servers
are new": it stamps the marker on every server that holds no key, refuses one that holds
keys (its data may be what is left of a loss), and leaves a server quorumlock already
uses as it is. ``quorumlock servers init`` is the same from the command line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import redis

from quorumlock._algorithm.outcomes import WRONG_TYPE, Reply
from quorumlock._algorithm.scripts import MARKER_KEY, PROVISION
from quorumlock._algorithm.wire import text
from quorumlock._exceptions import ConfigurationError
from quorumlock._io.errors import MarkerOfAnotherType, translate
from quorumlock._io.servers import ServerArg, ServerSpec, parse_servers

__all__ = ["Provisioned", "provision", "provision_each"]

#: How many key names a refusal shows.
_SAMPLE = 3


@dataclass(frozen=True, slots=True)
class Provisioned:
    """What :func:`provision` did on one server.

    ``status`` is ``"marked"`` (empty: marked as new now), ``"known"`` (quorumlock already
    uses it: left as it is), ``"refused"`` (it holds keys, it is a cluster, or it answered
    with an error no retry changes: a read-only replica, a command its ACL does not allow,
    a password it requires; the reason in ``message``) or ``"unreachable"`` (no answer,
    or another error, in ``message``). ``message`` is one line for people.
    """

    server: str
    status: Literal["marked", "known", "refused", "unreachable"]
    message: str

    @property
    def ok(self) -> bool:
        """True for ``"marked"`` and ``"known"``: nothing is left to do on this server."""
        return self.status in ("marked", "known")


def _client(item: object, spec: ServerSpec, timeout: float) -> tuple[redis.Redis, bool]:
    """A client for one server, and whether it is ours to close."""
    if isinstance(item, redis.Redis):
        return item, False
    return spec.client(timeout=timeout), True


def _cluster_refused(label: str, what: str) -> Provisioned:
    return Provisioned(
        label,
        "refused",
        f"{label}: refused: {what}: a cluster keeps a marker per slot and cannot be "
        "provisioned; its first use starts a quarantine (docs/cluster.md)",
    )


def _one(client: redis.Redis, label: str) -> Provisioned:
    # A cluster node's URL: the plain marker would land on the node that owns its slot,
    # where no cluster acquire reads it (they read the markers of the slots).
    if int(client.info("cluster").get("cluster_enabled", 0)):
        return _cluster_refused(label, "a cluster node")
    try:
        reply = client.eval(PROVISION.source, 1, MARKER_KEY)
    except redis.ResponseError as exc:
        if translate(exc)[1] == WRONG_TYPE:  # the script's one key: not the lock's
            raise MarkerOfAnotherType from None
        raise
    status, value = text(reply[0]), reply[1]
    if status == "marked":
        return Provisioned(
            label,
            "marked",
            f"{label}: marked as new (run_id {text(value)[:8]}…): no restart quarantine "
            "at its first use",
        )
    if status == "known":
        return Provisioned(
            label,
            "known",
            f"{label}: already used by quorumlock, left as it is (a quarantine it is in stands)",
        )
    count = int(value)
    names = [text(k) for k in client.scan(0, count=100)[1][:_SAMPLE]]
    sample = ", ".join([repr(n) for n in names] + (["…"] if count > len(names) else []))
    return Provisioned(
        label,
        "refused",
        f"{label}: refused: it holds {count} key(s) ({sample})."
        " Only an empty, brand-new server may be marked as new; one that lost its locks "
        "must go through its restart quarantine (docs/safety.md, B1)",
    )


def provision(
    servers: ServerArg | Sequence[ServerArg], *, timeout: float = 2.0
) -> list[Provisioned]:
    """Mark brand-new, empty servers as new, so that their first use starts no restart
    quarantine. The first step of a fresh deployment (docs/deployment.md).

    ``servers`` as :class:`quorumlock.Redlock` takes them: URLs or ``redis.Redis``
    clients (a cluster, or the URL of one of its nodes, is refused: its nodes keep a
    marker per slot, see docs/cluster.md). On each server, in one atomic step: a server
    that holds no key is marked as new; one quorumlock already uses is left as it is (its
    marker may carry a running quarantine and the fencing counter); one that holds keys
    is refused. Only for servers that never granted a lock: marking a server that lost
    its data would defeat the restart quarantine.

    Returns what was done, per server, in the order given. Raises
    :class:`ConfigurationError` naming every server when one was refused or could not
    be reached (the others are marked all the same: marking an empty server is harmless
    whatever the others are), or for a malformed list.
    """
    results = provision_each(servers, timeout=timeout)
    failed = [r for r in results if not r.ok]
    if failed:
        lines = "\n".join(r.message for r in results)
        raise ConfigurationError(
            f"{len(failed)} of {len(results)} server(s) could not be provisioned:\n{lines}"
        )
    return results


def provision_each(
    servers: ServerArg | Sequence[ServerArg], *, timeout: float = 2.0
) -> list[Provisioned]:
    """:func:`provision` without the exception: what happened on each server."""
    if isinstance(servers, str | redis.Redis) or not isinstance(servers, Sequence):
        items: Sequence[object] = [servers]
    else:
        items = servers
    specs = parse_servers(items)
    results: list[Provisioned] = []
    for item, spec in zip(items, specs, strict=True):
        if spec.cluster is not None:
            results.append(_cluster_refused(spec.label, "a cluster"))
            continue
        client, owned = _client(item, spec, timeout)
        try:
            results.append(_one(client, spec.label))
        except redis.RedisError as exc:
            reply, detail = translate(exc)
            if reply is Reply.FATAL:  # it answered, and no retry changes the answer
                message = f"{spec.label}: refused: {detail}"
                results.append(Provisioned(spec.label, "refused", message))
            else:
                message = f"{spec.label}: not provisioned: {type(exc).__name__}: {exc}"
                results.append(Provisioned(spec.label, "unreachable", message))
        finally:
            if owned:
                client.close()
    return results
