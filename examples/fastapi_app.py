"""A FastAPI app whose payments are serialised per order, on every worker and machine.

Run it (three servers, e.g. from `quorumlock servers start --count 3`):

    export QUORUMLOCK_SERVERS=redis://127.0.0.1:7001,redis://127.0.0.1:7002,redis://127.0.0.1:7003
    uvicorn examples.fastapi_app:app --workers 4

`POST /orders/42/pay` twice at the same time: one pays, the other waits for it (up to
2 s), then finds the order paid. Without the lock both could read "unpaid" and both
charge the card. The charges are kept in `orders.sqlite3` (or the file
`$ORDERS_DB` names), which every worker process shares, as it would a database.
docs/fastapi.md explains each part.
"""

from __future__ import annotations

import asyncio
import math
import os
import sqlite3
from contextlib import closing
from typing import Annotated

from fastapi import Depends, FastAPI

from quorumlock.asyncio import Lock
from quorumlock.fastapi import lifespan, locked

SERVERS = os.environ["QUORUMLOCK_SERVERS"].split(",")

# The lifespan creates the asyncio Redlock at startup and closes it at shutdown.
app = FastAPI(lifespan=lifespan(SERVERS, max_ttl=60))

# The orders' table (order id, times its card was charged), in a file that every worker
# process reads and writes: what one worker charged, the others see.
ORDERS = os.environ.get("ORDERS_DB", "orders.sqlite3")


def times_charged(order_id: int) -> int:
    with closing(sqlite3.connect(ORDERS)) as db:
        db.execute("CREATE TABLE IF NOT EXISTS charges (id INTEGER PRIMARY KEY, times INTEGER)")
        row = db.execute("SELECT times FROM charges WHERE id = ?", (order_id,)).fetchone()
    return row[0] if row else 0


async def charge_card(order_id: int) -> None:
    await asyncio.sleep(0.05)  # the payment provider's round trip
    with closing(sqlite3.connect(ORDERS)) as db, db:  # the inner `db`: commit
        db.execute(
            "INSERT INTO charges VALUES (?, 1) ON CONFLICT (id) DO UPDATE SET times = times + 1",
            (order_id,),
        )


OrderLock = Annotated[Lock, Depends(locked("orders:{order_id}", ttl=10, timeout=2))]


@app.post("/orders/{order_id}/pay")
async def pay(order_id: int, lock: OrderLock) -> dict[str, object]:
    # Held from here to the response: one request per order at a time. Another one
    # waits up to 2 s, then gets 409 Conflict.
    if times_charged(order_id) > 0:
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
