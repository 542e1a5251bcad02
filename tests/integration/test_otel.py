"""``quorumlock.otel``: spans and metrics through the real OpenTelemetry SDK (in-memory
span exporter and metric reader), after real acquires, contention, releases and losses."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

import quorumlock
from quorumlock import LockLost
from quorumlock.otel import OpenTelemetryObserver
from quorumlock.testing import LocalServerGroup
from tests.integration.apis import Api, call
from tests.integration.test_both_apis import wait_for
from tests.integration.test_observability import delete_everywhere


@dataclass
class Telemetry:
    spans: InMemorySpanExporter
    reader: InMemoryMetricReader
    tracer_provider: TracerProvider
    observer: OpenTelemetryObserver

    def finished(self) -> list[ReadableSpan]:
        """quorumlock's spans, in the order they ended."""
        spans = self.spans.get_finished_spans()
        return [s for s in spans if s.name.startswith("quorumlock.")]

    def points(self, metric: str) -> list[Any]:
        """The data points of ``metric`` (cumulative, since the start)."""
        data = self.reader.get_metrics_data()
        assert data is not None
        found: list[Any] = []
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        found.extend(m.data.data_points)
        return found

    def value(self, metric: str, **attributes: object) -> int:
        """The counter value of ``metric`` for exactly these attributes (0 if none)."""
        wanted = {f"quorumlock.{k}": v for k, v in attributes.items()}
        values = [p.value for p in self.points(metric) if dict(p.attributes) == wanted]
        assert len(values) <= 1
        return int(values[0]) if values else 0


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    spans = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(spans))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    observer = OpenTelemetryObserver(tracer_provider=tracer_provider, meter_provider=meter_provider)
    yield Telemetry(spans, reader, tracer_provider, observer)
    tracer_provider.shutdown()
    meter_provider.shutdown()


def attributes_of(span: ReadableSpan) -> dict[str, Any]:
    return dict(span.attributes or {})


def test_spans_and_metrics_of_real_locking(
    api: Api, servers: LocalServerGroup, lock_name: str, telemetry: Telemetry
) -> None:
    tokens: list[str] = []

    async def body() -> None:
        rl = api.redlock(
            servers.urls,
            observer=telemetry.observer,
            fencing=True,
            instance_timeout=1.0,
            retry_delay=0.05,
        )
        parent = telemetry.tracer_provider.get_tracer("test").start_as_current_span("work")
        with parent as work:
            lock = rl.lock(lock_name, ttl=10)
            assert await call(lock.acquire())
        assert lock.token is not None
        tokens.append(lock.token)
        # contention: another client's acquire fails after a few attempts
        other = rl.lock(lock_name, ttl=10)
        assert not await call(other.acquire(timeout=0.2))
        assert other.token is not None
        tokens.append(other.token)
        await call(lock.extend())
        assert await call(lock.release())
        # a loss: the keys vanish, the extension fails
        lost = rl.lock(lock_name, ttl=10)
        assert await call(lost.acquire())
        assert lost.token is not None
        tokens.append(lost.token)
        delete_everywhere(servers, lock_name)
        with pytest.raises(LockLost):
            await call(lost.extend())
        assert await call(lost.release()) is False

        spans = telemetry.finished()
        assert [s.name for s in spans] == [
            "quorumlock.acquire",
            "quorumlock.acquire",
            "quorumlock.extend",
            "quorumlock.release",
            "quorumlock.acquire",
            "quorumlock.extend",
            "quorumlock.release",
        ]
        acquired, contended, extended, released, _, failed, _ = spans

        # the acquire: a child of the span current where it ran
        assert acquired.parent is not None
        assert acquired.parent.span_id == work.get_span_context().span_id
        assert acquired.start_time is not None
        assert acquired.end_time is not None
        assert acquired.start_time < acquired.end_time
        assert attributes_of(acquired) == {
            "quorumlock.lock.name": lock_name,
            "quorumlock.servers": tuple(rl.servers),
            "quorumlock.attempts": 1,
            "quorumlock.acquired": True,
            "quorumlock.result": "acquired",
            "quorumlock.fencing_token": lock.fencing_token,
            "quorumlock.replies.granted": 5,
        }
        assert acquired.status.status_code is StatusCode.UNSET

        attrs = attributes_of(contended)
        assert attrs["quorumlock.acquired"] is False
        assert attrs["quorumlock.result"] == "contended"
        assert attrs["quorumlock.attempts"] >= 2
        assert attrs["quorumlock.replies.taken"] == 5
        assert "quorumlock.fencing_token" not in attrs
        assert contended.status.status_code is StatusCode.UNSET  # contention is no error
        assert contended.parent is None

        attrs = attributes_of(extended)
        assert attrs["quorumlock.extended"] is True
        assert attrs["quorumlock.renewal"] is False
        assert 9 < attrs["quorumlock.validity"] <= 10
        # decided by a majority: servers may be left unread
        assert attrs["quorumlock.replies.done"] >= 3
        assert attrs["quorumlock.replies.done"] + attrs.get("quorumlock.replies.not_read", 0) == 5
        assert attributes_of(released)["quorumlock.released"] is True

        attrs = attributes_of(failed)
        assert attrs["quorumlock.extended"] is False
        assert attrs["quorumlock.replies.not_held"] == 5
        assert attrs["quorumlock.reason"] == "only 0 of 5 servers confirmed it"
        assert failed.status.status_code is StatusCode.ERROR

        # metrics
        assert telemetry.value("quorumlock.acquisitions", result="acquired") == 2
        assert telemetry.value("quorumlock.acquisitions", result="contended") == 1
        assert telemetry.value("quorumlock.extensions", extended=True, renewal=False) == 1
        assert telemetry.value("quorumlock.extensions", extended=False, renewal=False) == 1
        assert telemetry.value("quorumlock.releases", released=True) == 1
        assert telemetry.value("quorumlock.releases", released=False) == 1
        assert telemetry.value("quorumlock.losses", reason="extension failed") == 1
        durations = telemetry.points("quorumlock.acquire.duration")
        by_result = {p.attributes["quorumlock.result"]: p for p in durations}
        assert by_result["acquired"].count == 2
        assert by_result["contended"].count == 1
        assert by_result["contended"].sum >= 0.2  # it waited for its timeout
        for server in rl.servers:
            replies = {
                reply: telemetry.value(
                    "quorumlock.server.replies", server=server, op="acquire", reply=reply
                )
                for reply in ("granted", "taken", "not read")
            }
            assert replies["granted"] + replies["not read"] == 2  # the second: unread, maybe
            assert replies["granted"] >= 1  # the first acquire connected: it read every reply
            assert replies["taken"] >= 2
        latencies = [
            p
            for p in telemetry.points("quorumlock.server.duration")
            if p.attributes["quorumlock.op"] == "acquire"
            and p.attributes["quorumlock.reply"] == "granted"
        ]
        assert sorted(p.attributes["quorumlock.server"] for p in latencies) == sorted(rl.servers)
        assert all(p.count in (1, 2) and p.sum > 0 for p in latencies)  # unread: no latency
        assert sum(p.count for p in latencies) >= len(rl.servers) + 3  # the second's majority

    api.run(body)
    everything = repr(
        [attributes_of(s) for s in telemetry.finished()]
        + [dict(p.attributes) for p in telemetry.points("quorumlock.server.replies")]
    )
    assert all(token not in everything for token in tokens)


def test_renewal_spans(
    api: Api, servers: LocalServerGroup, lock_name: str, telemetry: Telemetry
) -> None:
    """Lease renewals get spans too: without a parent on the sync lease thread; in
    asyncio, the lease task keeps the context of the acquire."""

    async def body() -> None:
        rl = api.redlock(servers.urls, observer=telemetry.observer, instance_timeout=1.0)
        lock = rl.lock(lock_name, ttl=0.6, auto_extend=True, max_hold=30)
        tracer = telemetry.tracer_provider.get_tracer("test")
        with tracer.start_as_current_span("work") as work:
            assert await call(lock.acquire())
        assert await wait_for(lambda: lock.extensions >= 1, 5)
        assert await call(lock.release())
        renewals = [
            s for s in telemetry.finished() if attributes_of(s).get("quorumlock.renewal") is True
        ]
        assert renewals
        assert attributes_of(renewals[0])["quorumlock.extended"] is True
        parent = renewals[0].parent
        if api.flavour == "sync":
            assert parent is None
        else:
            assert parent is not None
            assert parent.span_id == work.get_span_context().span_id

    api.run(body)


def test_acquire_span_is_an_error_when_servers_are_unavailable(
    api: Api, telemetry: Telemetry, lock_name: str
) -> None:
    from quorumlock import QuorumUnavailable  # noqa: PLC0415
    from tests.conftest import refused_ports  # noqa: PLC0415

    async def body() -> None:
        rl = api.redlock([f"redis://127.0.0.1:{port}"], observer=telemetry.observer)
        with pytest.raises(QuorumUnavailable):
            await call(rl.lock(lock_name, ttl=10).acquire(blocking=False))
        (span,) = telemetry.finished()
        assert attributes_of(span)["quorumlock.result"] == "unavailable"
        assert attributes_of(span)["quorumlock.replies.error"] == 1
        assert span.status.status_code is StatusCode.ERROR
        assert telemetry.value("quorumlock.acquisitions", result="unavailable") == 1

    with refused_ports(1) as (port,):  # (held: a parallel test's server cannot take it)
        api.run(body)


BLOCK_OPENTELEMETRY = """
import sys

class Block:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "opentelemetry":
            raise ImportError("no module named " + name)

sys.meta_path.insert(0, Block())
"""


def test_quorumlock_works_without_opentelemetry() -> None:
    """As if OpenTelemetry were not installed: quorumlock imports (redis-py imports
    OpenTelemetry by itself when it is there, so sys.modules cannot tell), and
    quorumlock.otel says what to install."""
    code = BLOCK_OPENTELEMETRY + (
        "import quorumlock, quorumlock.asyncio, quorumlock.cli\n"
        "try:\n"
        "    import quorumlock.otel\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "pip install 'quorumlock[otel]'" in done.stdout


def test_only_quorumlock_otel_imports_opentelemetry() -> None:
    package = Path(quorumlock.__file__).parent
    importers = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            else:
                continue
            if any(name.split(".")[0] == "opentelemetry" for name in names):
                importers.append(path.relative_to(package).as_posix())
    assert sorted(set(importers)) == ["otel.py"]
