"""The other process of the hand-off tests: it adopts a lock exported by the test.

Run as ``python -m tests.integration.adopter`` with one JSON object on stdin::

    {"servers": [...], "flavour": "sync" | "async", "action": ..., "handle": {...},
     "ttl": 30}

and it prints one JSON object on stdout. Actions:

- ``extend-export``: adopt, ``extend(ttl)``, hand the lock over again; prints the
  adopted validity, the extended validity and the new handle;
- ``release``: adopt, release; prints whether the release found the lock held;
- ``extend``: adopt, extend; prints the error's type name (or null).

:func:`spawned` is the same for ``multiprocessing`` (spawn), with a pickled handle.
"""

from __future__ import annotations

import asyncio
import json
import sys
from multiprocessing.queues import Queue
from typing import Any

import quorumlock
import quorumlock.asyncio


def adopt_sync(servers: list[str], action: str, handle: quorumlock.LockHandle, ttl: float) -> Any:
    with quorumlock.Redlock(servers, instance_timeout=1.0) as rl:
        lock = rl.adopt(handle)
        adopted = lock.validity
        if action == "extend-export":
            extended = lock.extend(ttl)
            return {"adopted": adopted, "extended": extended, "handle": lock.export().to_dict()}
        if action == "release":
            return {"adopted": adopted, "released": lock.release()}
        try:
            lock.extend(ttl)
        except quorumlock.QuorumLockError as exc:
            return {"adopted": adopted, "error": type(exc).__name__}
        return {"adopted": adopted, "error": None}


async def adopt_async(
    servers: list[str], action: str, handle: quorumlock.LockHandle, ttl: float
) -> Any:
    async with quorumlock.asyncio.Redlock(servers, instance_timeout=1.0) as rl:
        lock = rl.adopt(handle)
        adopted = lock.validity
        if action == "extend-export":
            extended = await lock.extend(ttl)
            handle = await lock.export()
            return {"adopted": adopted, "extended": extended, "handle": handle.to_dict()}
        if action == "release":
            return {"adopted": adopted, "released": await lock.release()}
        try:
            await lock.extend(ttl)
        except quorumlock.QuorumLockError as exc:
            return {"adopted": adopted, "error": type(exc).__name__}
        return {"adopted": adopted, "error": None}


def spawned(servers: list[str], handle: quorumlock.LockHandle, results: Queue[Any]) -> None:
    """multiprocessing target: adopt, extend to 20 s, report the pttl seen, release."""
    import redis  # noqa: PLC0415 - only the spawned child needs it

    try:
        with quorumlock.Redlock(servers, instance_timeout=1.0) as rl:
            lock = rl.adopt(handle)
            lock.extend(20)
            pttls = []
            for url in servers:
                client = redis.Redis.from_url(url)
                pttls.append(int(client.pttl(handle.name)))
                client.close()
            results.put({"pttls": pttls, "released": lock.release(), "token": lock.token})
    except BaseException as exc:
        results.put({"error": repr(exc)})


def main() -> None:
    request = json.loads(sys.stdin.read())
    handle = quorumlock.LockHandle.from_dict(request["handle"])
    args = (request["servers"], request["action"], handle, request["ttl"])
    sync = request["flavour"] == "sync"
    result = adopt_sync(*args) if sync else asyncio.run(adopt_async(*args))
    print(json.dumps(result))


if __name__ == "__main__":
    main()
