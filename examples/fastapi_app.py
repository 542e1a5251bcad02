"""A FastAPI app whose payments are serialised per order, on every worker and machine.

Run it (three servers, e.g. from `quorumlock servers start --count 3`):

    export QUORUMLOCK_SERVERS=redis://127.0.0.1:7001,redis://127.0.0.1:7002,redis://127.0.0.1:7003
    uvicorn examples.fastapi_app:app --workers 4

`POST /orders/42/pay` twice at the same time: one pays, the other waits for it (up to
2 s), then finds the order paid. Without the lock both could read "unpaid" and both
charge the card. docs/fastapi.md explains each part.
"""

from __future__ import annotations

import asyncio
import math
import os
from typing import Annotated

from fastapi import Depends, FastAPI

from quorumlock.asyncio import Lock
from quorumlock.fastapi import lifespan, locked

SERVERS = os.environ["QUORUMLOCK_SERVERS"].split(",")

# The lifespan creates the asyncio Redlock at startup and closes it at shutdown.
app = FastAPI(lifespan=lifespan(SERVERS, max_ttl=60))

# Stands for a table: {order_id: number of times the card was charged}.
charges: dict[int, int] = {}


async def charge_card(order_id: int) -> None:
    await asyncio.sleep(0.05)  # the payment provider's round trip
    charges[order_id] = charges.get(order_id, 0) + 1


OrderLock = Annotated[Lock, Depends(locked("orders:{order_id}", ttl=10, timeout=2))]


@app.post("/orders/{order_id}/pay")
async def pay(order_id: int, lock: OrderLock) -> dict[str, object]:
    # Held from here to the response: one request per order at a time. Another one
    # waits up to 2 s, then gets 409 Conflict.
    if charges.get(order_id, 0) > 0:
        return {"order": order_id, "status": "already paid"}
    lock.check()  # LockLost (answered 503) if the 10 s ran out: never charge unprotected
    await charge_card(order_id)
    return {"order": order_id, "status": "paid"}


ReportLock = Annotated[
    Lock, Depends(locked("report:{day}", ttl=30, max_hold=math.inf, status_code=423))
]


@app.post("/reports")
async def build_report(day: str, lock: ReportLock) -> dict[str, str]:
    # `day` is a query parameter (POST /reports?day=2026-11-24). The lease is renewed
    # for as long as the report takes; a second request for the same day is answered
    # 423 Locked at once (timeout=0, the default). Should the renewals fail, this
    # coroutine is cancelled and the client gets 503.
    await asyncio.sleep(0.1)
    return {"day": day, "status": "built"}
