"""The quorumlock side of the contention test: ``python -m tests.compat.py_worker``.

The twin of ``node/redlock_client.js contend``, with the same checker protocol on a
separate server: after the checker's ``<name>:go`` key appears, take the lock again and
again for ``--duration`` ms; inside each hold INCR ``<name>:inside`` (any reply but 1 is an
overlap), GETSET ``<name>:last`` (a change of side is a hand-off), wait ``--hold`` ms,
DECR. With ``--fencing``, each hold's fencing token must also exceed the last one
recorded by a quorumlock holder (``<name>:fence``). Prints one JSON object on stdout.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from typing import Any

import redis

from quorumlock import Redlock

GO_WAIT = 30.0


def run(args: argparse.Namespace) -> dict[str, Any]:
    result: dict[str, Any] = {
        "side": args.side,
        "holds": 0,
        "refused": 0,
        "handoffs": 0,
        "release_failures": 0,
        "overlaps": [],
        "fence_violations": [],
        "errors": [],
    }
    checker = redis.Redis.from_url(args.checker, socket_timeout=5, decode_responses=True)
    name = args.name
    try:
        rl = Redlock(
            args.servers.split(","),
            retry_delay=0.05,
            instance_timeout=0.25,
            max_ttl=args.max_ttl or None,
            fencing=args.fencing,
        )
        checker.incr(f"{name}:ready")
        give_up = time.monotonic() + GO_WAIT
        while not checker.exists(f"{name}:go"):
            if time.monotonic() > give_up:
                raise TimeoutError(f"no go signal within {GO_WAIT} s")
            time.sleep(0.005)
        deadline = time.monotonic() + args.duration / 1000
        while time.monotonic() < deadline:
            lock = rl.lock(name, ttl=args.ttl / 1000)
            if not lock.acquire(timeout=0.3):
                result["refused"] += 1
                continue
            inside = checker.incr(f"{name}:inside")
            if inside != 1:
                result["overlaps"].append({"inside": inside, "at": result["holds"]})
            last = checker.getset(f"{name}:last", args.side)
            if last is not None and last != args.side:
                result["handoffs"] += 1
            if args.fencing:
                token = lock.fencing_token
                previous = checker.getset(f"{name}:fence", str(token))
                if token is None or (previous is not None and int(previous) >= token):
                    result["fence_violations"].append([previous and int(previous), token])
            time.sleep(args.hold / 1000)
            checker.decr(f"{name}:inside")
            result["holds"] += 1
            if not lock.release():
                result["release_failures"] += 1
            time.sleep(random.uniform(0.01, 0.03))  # let the others in
        rl.close()
    except Exception as exc:
        result["errors"].append(repr(exc))
    finally:
        checker.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--servers", required=True, help="comma-separated redis:// URLs")
    parser.add_argument("--name", required=True)
    parser.add_argument("--ttl", type=int, required=True, help="ms")
    parser.add_argument("--duration", type=int, required=True, help="ms")
    parser.add_argument("--hold", type=int, required=True, help="ms")
    parser.add_argument("--checker", required=True, help="redis:// URL of the checker")
    parser.add_argument("--side", default="quorumlock")
    parser.add_argument("--max-ttl", type=float, default=60.0, help="s; 0 for no quarantine")
    parser.add_argument("--fencing", action="store_true")
    print(json.dumps(run(parser.parse_args())), flush=True)


if __name__ == "__main__":
    main()
