"""Read-write locks with a Redis/Valkey Cluster as one of the N instances.

The read-write lock of a name is one key, ``quorumlock:rw:{<name>}``: its slot is the
name's, so it lives on the master that serves the name, with that slot's marker
(restart quarantine, fencing counter). Catches a read-write command sent to the wrong
node (a MOVED error), a marker of another slot (a CROSSSLOT error) and a cluster whose
answer is not counted.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from quorumlock import Reply
from quorumlock._algorithm.cluster import key_slot
from quorumlock._algorithm.rwlock import rw_key
from quorumlock.testing import LocalCluster, LocalServerGroup
from tests.integration.apis import Api, call
from tests.integration.test_cluster import (
    PATIENT,
    cluster_client,
    names_by_master,
    warm_up,
)

G, X, D = Reply.GRANTED, Reply.TAKEN, Reply.DONE


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    """One 3-master cluster for this module."""
    with LocalCluster(3) as made:
        yield made


def test_readers_and_writers_on_every_master(
    api: Api, cluster: LocalCluster, servers: LocalServerGroup
) -> None:
    names = names_by_master(cluster, 2)
    owners = cluster.slot_map()

    async def body() -> None:
        async with cluster_client(api, cluster) as client, cluster_client(api, cluster) as other:
            urls = servers.urls[:2]
            rl = api.redlock([client, *urls], instance_timeout=PATIENT, fencing=True)
            rl2 = api.redlock([other, *urls], instance_timeout=PATIENT, fencing=True)
            await warm_up(rl, names)
            await warm_up(rl2, names)
            for group in names.values():
                for name in group:
                    assert key_slot(rw_key(name)) == key_slot(name)
                    owner = cluster.node_client(owners[key_slot(name)])
                    reader = rl.rwlock(name, ttl=5).read()
                    assert await call(reader.acquire(blocking=False))
                    assert [o.reply for o in reader.outcomes] == [G, G, G], reader.outcomes
                    assert owner.zcard(rw_key(name)) == 1
                    writer = rl2.rwlock(name, ttl=5).write()
                    assert not await call(writer.acquire(blocking=False))
                    assert [o.reply for o in writer.outcomes] == [X, X, X]
                    assert await call(reader.extend())
                    assert await call(reader.release())
                    assert await call(writer.acquire(blocking=False))
                    assert isinstance(writer.fencing_token, int)
                    await call(writer.downgrade())
                    assert [o.reply for o in writer.outcomes] == [D, D, D]
                    assert await call(writer.release())
                    assert owner.exists(rw_key(name)) == 0
                    owner.close()

    api.run(body)
