"""quorumlock.fastapi on real servers, through uvicorn on loopback (docs/fastapi.md)."""

# No "from __future__ import annotations": FastAPI must evaluate the handlers'
# annotations, and some name objects local to the test.

import asyncio
import enum
import importlib.util
import logging
import math
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from contextlib import asynccontextmanager
from pathlib import Path
from types import ModuleType
from typing import Annotated, Any

import httpx
import pytest
from fastapi import Depends, FastAPI

import quorumlock
from quorumlock import ConfigurationError
from quorumlock.asyncio import Lock, Redlock
from quorumlock.fastapi import STATE_KEY, get_redlock, lifespan, locked
from quorumlock.testing import LocalServerGroup
from tests.conftest import children_of, refused_ports, values
from tests.web.asgi import serving

EXAMPLE = Path(__file__).parents[2] / "examples" / "fastapi_app.py"


def load_example(
    monkeypatch: pytest.MonkeyPatch, servers: LocalServerGroup, orders: Path
) -> ModuleType:
    monkeypatch.setenv("QUORUMLOCK_SERVERS", ",".join(servers.urls))
    monkeypatch.setenv("ORDERS_DB", str(orders))
    spec = importlib.util.spec_from_file_location("fastapi_example", EXAMPLE)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(body: Callable[[], Coroutine[Any, Any, None]]) -> None:
    async def bounded() -> None:
        async with asyncio.timeout(90):
            await body()

    asyncio.run(bounded())


def test_example_charges_each_order_once(
    monkeypatch: pytest.MonkeyPatch, servers: LocalServerGroup, tmp_path: Path
) -> None:
    example = load_example(monkeypatch, servers, tmp_path / "orders.sqlite3")

    async def body() -> None:
        async with serving(example.app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            replies = await asyncio.gather(*(http.post("/orders/7/pay") for _ in range(8)))
            statuses = sorted(r.json()["status"] for r in replies if r.status_code == 200)
            # Each one waits up to 2 s for the one before: on a loaded machine some may
            # give up (409); none may charge a second time.
            assert {r.status_code for r in replies} <= {200, 409}
            assert statuses.count("paid") == 1, statuses
            assert example.times_charged(7) == 1

            # The report's lock taken elsewhere: 423 at once, and the handler never ran.
            other = quorumlock.Redlock(servers.urls)
            with other.lock("report:2026-11-24", ttl=10):
                reply = await http.post("/reports", params={"day": "2026-11-24"})
                assert reply.status_code == 423, reply.text
                assert "held by another request" in reply.json()["detail"]
            other.close()
            reply = await http.post("/reports", params={"day": "2026-11-24"})
            assert reply.json() == {"day": "2026-11-24", "status": "built"}
        assert not hasattr(example.app.state, STATE_KEY)  # the lifespan closed it

    run(body)
    assert values(servers, "orders:7") == [None] * len(servers)


def mapped(pid: int) -> str:
    """The files process ``pid`` has mapped (its shared libraries among them)."""
    try:
        return Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return ""


def test_example_charges_once_across_four_worker_processes(
    monkeypatch: pytest.MonkeyPatch, servers: LocalServerGroup, tmp_path: Path
) -> None:
    """The example as its docs run it, `uvicorn ... --workers 4`: eight concurrent
    payments of one order, spread over the four processes, charge the card once. The
    workers run on uvloop, as uvicorn's do where uvicorn[standard] is installed (the test
    extra has uvloop; the other tests here run on asyncio's own loop)."""
    orders = tmp_path / "orders.sqlite3"
    example = load_example(monkeypatch, servers, orders)  # reads the file as they do
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [sys.executable, "-m", "uvicorn", "examples.fastapi_app:app", "--workers", "4"]
    command += ["--host", "127.0.0.1", "--port", str(port), "--log-level", "info"]
    log = tmp_path / "uvicorn.log"
    with log.open("wb") as out:
        uvicorn = subprocess.Popen(command, cwd=EXAMPLE.parents[1], stderr=out)
    try:
        deadline = time.monotonic() + 60
        # Every worker started (each logs this once its lifespan ran): the requests below
        # are spread over all four, not served by the first one up.
        while log.read_text().count("Application startup complete") < 4:
            assert uvicorn.poll() is None, log.read_text()
            assert time.monotonic() < deadline, log.read_text()
            time.sleep(0.1)
        on_uvloop = [pid for pid in children_of(uvicorn.pid) if "/uvloop/" in mapped(pid)]
        assert len(on_uvloop) == 4, log.read_text()

        async def body() -> None:
            base = f"http://127.0.0.1:{port}"
            async with httpx.AsyncClient(base_url=base, timeout=30) as http:
                replies = await asyncio.gather(*(http.post("/orders/9/pay") for _ in range(8)))
            assert {r.status_code for r in replies} <= {200, 409}, [r.text for r in replies]
            statuses = [r.json()["status"] for r in replies if r.status_code == 200]
            assert statuses.count("paid") == 1, statuses

        run(body)
    finally:
        uvicorn.terminate()
        try:
            uvicorn.wait(timeout=20)
        except subprocess.TimeoutExpired:
            uvicorn.kill()
            uvicorn.wait()
    assert example.times_charged(9) == 1
    assert values(servers, "orders:9") == [None] * len(servers)


def counter_app(servers: list[str], **lock_options: Any) -> tuple[FastAPI, dict[str, int]]:
    """POST /locked/{key} and /unlocked/{key}: a read-modify-write with an await in the
    middle, counting how many requests are inside at once."""
    app = FastAPI(lifespan=lifespan(servers))
    seen = {"count": 0, "inside": 0, "most_inside": 0}

    async def bump() -> None:
        seen["inside"] += 1
        seen["most_inside"] = max(seen["most_inside"], seen["inside"])
        count = seen["count"]
        await asyncio.sleep(0.005)
        seen["count"] = count + 1
        seen["inside"] -= 1

    options = {"ttl": 10, "timeout": 30, **lock_options}

    @app.post("/locked/{key}")
    async def with_lock(
        key: str, lock: Annotated[Lock, Depends(locked("n:{key}", **options))]
    ) -> int:
        await bump()
        return seen["count"]

    @app.post("/unlocked/{key}")
    async def without_lock(key: str) -> int:
        await bump()
        return seen["count"]

    return app, seen


@pytest.mark.parametrize("route", ["locked", "unlocked"])
def test_concurrent_requests_serialise(servers: LocalServerGroup, route: str) -> None:
    app, seen = counter_app(servers.urls)

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
            replies = await asyncio.gather(*(http.post(f"/{route}/k") for _ in range(12)))
        assert all(r.status_code == 200 for r in replies), [
            (r.status_code, r.text) for r in replies
        ]

    run(body)
    if route == "locked":
        assert seen["most_inside"] == 1
        assert seen["count"] == 12
    else:  # the same requests without the dependency overlap: the check above can fail
        assert seen["most_inside"] > 1
        assert seen["count"] < 12


def test_taken_lock_answers_the_configured_status(servers: LocalServerGroup) -> None:
    app = FastAPI(lifespan=lifespan(servers.urls))
    ran: list[str] = []

    @app.get("/a/{item}")
    async def a(item: str, lock: Annotated[Lock, Depends(locked("item:{item}", ttl=5))]) -> str:
        ran.append(item)
        return item

    @app.get("/b/{item}")
    async def b(
        item: str,
        lock: Annotated[Lock, Depends(locked("item:{item}", ttl=5, status_code=423))],
    ) -> str:
        ran.append(item)
        return item

    async def body() -> None:
        other = quorumlock.Redlock(servers.urls)
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            with other.lock("item:x", ttl=10):
                assert (await http.get("/a/x")).status_code == 409
                reply = await http.get("/b/x")
                assert reply.status_code == 423
                assert reply.json() == {"detail": "lock 'item:x' is held by another request"}
                assert (await http.get("/a/y")).status_code == 200  # another name: free
            assert (await http.get("/a/x")).json() == "x"  # released: free again
        other.close()

    run(body)
    assert ran == ["y", "x"]


def test_lost_lease_cancels_the_handler(servers: LocalServerGroup) -> None:
    app = FastAPI(lifespan=lifespan(servers.urls))
    ended: list[str] = []
    never = asyncio.Event()

    @app.get("/slow/{item}")
    async def slow(
        item: str, lock: Annotated[Lock, Depends(locked("slow:{item}", ttl=0.5))]
    ) -> str:
        try:
            async with asyncio.timeout(30):
                await never.wait()  # outlives the 0.5 s lease (no max_hold: not renewed)
        except asyncio.CancelledError:
            ended.append("cancelled")
            raise
        ended.append("finished")
        return "done"

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
            reply = await http.get("/slow/1")
            assert reply.status_code == 503, reply.text
            assert "was lost" in reply.json()["detail"]

    run(body)
    assert ended == ["cancelled"]
    assert values(servers, "slow:1") == [None] * len(servers)


@pytest.mark.parametrize("scope", ["request", "function"])
def test_a_loss_found_as_a_busy_handler_returns_keeps_its_response(
    servers: LocalServerGroup, caplog: pytest.LogCaptureFixture, scope: Any
) -> None:
    """An async handler that never awaits while its lease runs out cannot be cancelled:
    the loss is found as the block ends, after the response was made (with the default
    scope, sent). The response stands and a WARNING says so, as for a sync handler; the
    server logged an ERROR, "Exception in ASGI application" (a 503 raised after the
    response had started), and the client of a function-scoped one got the 503."""
    app = FastAPI(lifespan=lifespan(servers.urls))

    @app.get("/busy")
    async def busy(
        lock: Annotated[Lock, Depends(locked("busy", ttl=0.3), scope=scope)],
    ) -> str:
        time.sleep(0.6)  # no await: the lease's task cannot run meanwhile
        return "done"

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
            reply = await http.get("/busy")
            assert reply.status_code == 200, reply.text
            assert reply.json() == "done"

    with caplog.at_level(logging.WARNING):
        run(body)
    assert [r for r in caplog.records if r.levelno >= logging.ERROR] == []
    stands = [r for r in caplog.records if "the response of the request stands" in r.message]
    assert len(stands) == 1
    assert stands[0].name == "quorumlock"
    assert values(servers, "busy") == [None] * len(servers)


def test_max_hold_renews_the_lease_for_a_long_handler(servers: LocalServerGroup) -> None:
    app = FastAPI(lifespan=lifespan(servers.urls))

    @app.get("/long")
    async def long(
        lock: Annotated[Lock, Depends(locked("long", ttl=1, max_hold=math.inf))],
    ) -> float:
        await asyncio.sleep(2.5)  # well past the ttl: only the renewals keep the lock
        return lock.check()

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
            reply = await http.get("/long")
            assert reply.status_code == 200, reply.text
            assert 0 < reply.json() <= 1

    run(body)


def test_name_from_a_query_parameter_and_a_missing_one(servers: LocalServerGroup) -> None:
    app = FastAPI(lifespan=lifespan(servers.urls))
    seen: list[str] = []

    @app.get("/q")
    async def q(lock: Annotated[Lock, Depends(locked("user:{user_id}", ttl=5))]) -> None:
        seen.append(lock.name)

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            assert (await http.get("/q", params={"user_id": "ann"})).status_code == 200
            reply = await http.get("/q")
            assert reply.status_code == 422
            assert "needs 'user_id'" in reply.json()["detail"]
            reply = await http.get("/q", params={"user_id": "x" * 5000})
            assert reply.status_code == 422  # a name longer than 4096 bytes

    run(body)
    assert seen == ["user:ann"]


class Shelf(enum.Enum):
    TOP = "top"
    LOW = "low"


def test_the_name_uses_the_values_the_handler_receives(servers: LocalServerGroup) -> None:
    """ "/orders/08/pay" and "/orders/+8/pay" pay order 8, as "/orders/8/pay" does: the
    same lock, "orders:8", held elsewhere refuses all three. A str parameter keeps its
    text; an enum gives its value; a value the handler's type refuses keeps its text
    (FastAPI answers 422). The orders' lock is released before the response is sent
    (``scope="function"``): the default scope releases it after, and the next request
    of the loop could come first and be refused (seen on a loaded host)."""
    app = FastAPI(lifespan=lifespan(servers.urls))
    seen: list[str] = []

    @app.post("/orders/{order_id}/pay")
    async def pay(
        order_id: int,
        lock: Annotated[Lock, Depends(locked("orders:{order_id}", ttl=5), scope="function")],
    ) -> int:
        seen.append(lock.name)
        return order_id

    @app.post("/notes/{note}")
    async def note(
        note: str, lock: Annotated[Lock, Depends(locked("notes:{note}", ttl=5))]
    ) -> None:
        seen.append(lock.name)

    @app.post("/shelves")
    async def shelf(
        shelf: Shelf,
        day: uuid.UUID,
        lock: Annotated[Lock, Depends(locked("s:{shelf}:{day}", ttl=5))],
    ) -> None:
        seen.append(lock.name)

    day = "A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11"

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            for text in ("8", "08", "+8"):
                reply = await http.post(f"/orders/{text}/pay")
                assert reply.status_code == 200, reply.text
                assert reply.json() == 8
            other = quorumlock.Redlock(servers.urls)
            with other.lock("orders:8", ttl=10):
                for text in ("8", "08", "+8"):
                    reply = await http.post(f"/orders/{text}/pay")
                    assert reply.status_code == 409, reply.text
            other.close()
            assert (await http.post("/orders/eight/pay")).status_code == 422
            assert (await http.post("/notes/08")).status_code == 200
            reply = await http.post("/shelves", params={"shelf": "top", "day": day})
            assert reply.status_code == 200, reply.text

    run(body)
    assert seen == ["orders:8"] * 3 + ["notes:08", f"s:top:{day.lower()}"]
    assert values(servers, "orders:8") == [None] * len(servers)


def test_too_few_servers_answers_503(servers: LocalServerGroup) -> None:
    # Ports with nothing listening, held for the test: every server refuses the connection.
    with refused_ports(3) as ports:
        down = Redlock([f"redis://127.0.0.1:{port}" for port in ports], connect_timeout=0.2)
        app = FastAPI()

        @app.get("/x")
        async def x(lock: Annotated[Lock, Depends(locked("x", ttl=5, redlock=down))]) -> None:
            raise AssertionError("must not run")

        async def body() -> None:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
                reply = await http.get("/x")
            assert reply.status_code == 503
            assert "too few servers" in reply.json()["detail"]
            await down.close()

        run(body)


def test_inner_lifespan_and_get_redlock(servers: LocalServerGroup) -> None:
    events: list[str] = []

    @asynccontextmanager
    async def own(app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        events.append("started")
        yield {"greeting": "hi"}
        events.append("stopped")

    app = FastAPI(lifespan=lifespan(servers.urls, inner=own))

    @app.get("/")
    async def root(redlock: Annotated[Redlock, Depends(get_redlock)]) -> str:
        async with redlock.lock("root", ttl=5):
            return "ok"

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            assert (await http.get("/")).json() == "ok"

    run(body)
    assert events == ["started", "stopped"]


def test_bad_arguments_are_refused_when_the_route_is_declared() -> None:
    with pytest.raises(ConfigurationError, match="plain"):
        locked("orders:{0}", ttl=5)
    with pytest.raises(ConfigurationError, match="plain"):
        locked("orders:{order.id}", ttl=5)
    with pytest.raises(ConfigurationError, match="empty"):
        locked("", ttl=5)
    # Fixed text that every name starts with, kept for quorumlock's own keys.
    with pytest.raises(ConfigurationError, match=r"makes no valid name.*quorumlock:rw:"):
        locked("quorumlock:rw:{doc}", ttl=5)
    with pytest.raises(ConfigurationError, match=r"makes no valid name.*4096"):
        locked("x" * 5000 + "{doc}", ttl=5)
    locked("quorumlock:jobs:{doc}", ttl=5)  # not one of them
    with pytest.raises(ConfigurationError, match="status_code"):
        locked("a", ttl=5, status_code=200)  # type: ignore[arg-type]
    with pytest.raises(ConfigurationError, match="lost_status_code"):
        locked("a", ttl=5, lost_status_code=200)
    with pytest.raises(ConfigurationError):
        locked("a", ttl=-1)
    with pytest.raises(ConfigurationError, match="shorter than the ttl"):
        locked("a", ttl=5, max_hold=2)
    with pytest.raises(ConfigurationError, match="URL"):
        lifespan(["not a url"])
    # The sync Redlock was accepted, and every request was a 500 (its Lock has no
    # "async with"); a URL was an AttributeError.
    sync_redlock = quorumlock.Redlock(["redis://127.0.0.1:1"])
    with pytest.raises(TypeError, match=r"quorumlock\.asyncio\.Redlock"):
        locked("a", ttl=5, redlock=sync_redlock)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"quorumlock\.asyncio\.Redlock"):
        locked("a", ttl=5, redlock="redis://127.0.0.1:1")  # type: ignore[arg-type]


def test_function_scope_releases_before_the_response(servers: LocalServerGroup) -> None:
    app = FastAPI(lifespan=lifespan(servers.urls))

    @app.get("/f/{item}")
    async def f(
        item: str,
        lock: Annotated[Lock, Depends(locked("f:{item}", ttl=5), scope="function")],
    ) -> str:
        return lock.name

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            reply = await http.get("/f/1")
            assert reply.json() == "f:1"
            # Released before the response was sent: nothing left when it arrives.
            assert values(servers, "f:1") == [None] * len(servers)

    run(body)


def test_the_docs_show_the_example_as_it_is() -> None:
    page = (Path(__file__).parents[2] / "docs" / "fastapi.md").read_text()
    block = page.split("```python\n", 1)[1].split("```", 1)[0]
    assert block.startswith("import asyncio")
    assert block in EXAMPLE.read_text()


def test_a_sync_handler_is_not_interrupted_and_its_check_answers_503(
    servers: LocalServerGroup,
) -> None:
    app = FastAPI(lifespan=lifespan(servers.urls))
    ended: list[str] = []

    @app.get("/sync")
    def sync(lock: Annotated[Lock, Depends(locked("sync", ttl=0.5))]) -> str:
        time.sleep(1.0)  # twice the ttl, in a worker thread: nothing can interrupt it
        ended.append("slept")
        lock.check()  # raises LockLost: the lease ran out
        ended.append("checked")
        return "done"

    async def body() -> None:
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=60) as http:
            reply = await http.get("/sync")
            assert reply.status_code == 503, reply.text
            assert ended == ["slept"]  # answered once it was done, not while it ran

    run(body)
    assert values(servers, "sync") == [None] * len(servers)


def test_the_handlers_own_lock_errors_are_not_taken_for_the_requests(
    servers: LocalServerGroup,
) -> None:
    app = FastAPI(lifespan=lifespan(servers.urls))

    @app.get("/inner")
    async def inner(
        lock: Annotated[Lock, Depends(locked("outer", ttl=5))],
        redlock: Annotated[Redlock, Depends(get_redlock)],
    ) -> None:
        async with redlock.lock("inner", ttl=5, timeout=0):
            pass

    async def body() -> None:
        other = quorumlock.Redlock(servers.urls)
        async with serving(app) as url, httpx.AsyncClient(base_url=url, timeout=30) as http:
            with other.lock("inner", ttl=10):
                reply = await http.get("/inner")
        other.close()
        # The handler's LockNotAcquired is its own error (500), not "outer is taken".
        assert reply.status_code == 500

    run(body)
    assert values(servers, "outer") == [None] * len(servers)
