"""OpenTelemetry spans and metrics for quorumlock (``pip install 'quorumlock[otel]'``).

::

    from quorumlock import Redlock
    from quorumlock.otel import OpenTelemetryObserver

    rl = Redlock(servers, observer=OpenTelemetryObserver())

It records through the OpenTelemetry *API*: the application installs and configures the
SDK (providers, exporters), or passes ``tracer_provider`` / ``meter_provider``. Without
an SDK, the API's no-op providers make it cost little. quorumlock needs OpenTelemetry
for this module only (redis-py may import it by itself when it is installed).

Spans (kind INTERNAL), each timed to cover the operation, child of the span current
where the operation ran: sync lease renewals run on the lease thread (no parent), asyncio
ones in the lease task, which started with the context of the acquire:

- ``quorumlock.acquire``: ``quorumlock.lock.name``, ``quorumlock.servers`` (labels,
  never a password), ``quorumlock.attempts``, ``quorumlock.acquired``,
  ``quorumlock.result``, ``quorumlock.fencing_token`` (with fencing on), and one
  ``quorumlock.replies.<reply>`` count per kind of answer in the last attempt (e.g.
  ``quorumlock.replies.granted = 3``); status ERROR when servers, not another client,
  kept the lock away (results ``unavailable``, ``quarantined``, ``unfenced``, ``fatal``);
- ``quorumlock.extend``: the name, servers and reply counts, ``quorumlock.extended``,
  ``quorumlock.renewal``, ``quorumlock.validity``, ``quorumlock.reason`` on failure
  (status ERROR);
- ``quorumlock.release``: the name, servers and reply counts, ``quorumlock.released``.

Metrics (lock names are left out: they can be unbounded):

- ``quorumlock.acquisitions`` (counter) by ``quorumlock.result``;
- ``quorumlock.acquire.duration`` (histogram, s) by ``quorumlock.result``;
- ``quorumlock.extensions`` (counter) by ``quorumlock.extended`` and ``quorumlock.renewal``;
- ``quorumlock.releases`` (counter) by ``quorumlock.released``;
- ``quorumlock.losses`` (counter) by ``quorumlock.reason``;
- ``quorumlock.server.replies`` (counter) and ``quorumlock.server.duration`` (histogram,
  s; answers with a latency only) by ``quorumlock.server``, ``quorumlock.op`` and
  ``quorumlock.reply``.

No attribute ever holds a lock's token.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

try:
    from opentelemetry import metrics, trace
    from opentelemetry.metrics import Histogram, Meter, MeterProvider
    from opentelemetry.trace import Status, StatusCode, TracerProvider
    from opentelemetry.util.types import AttributeValue
except ImportError as exc:  # pragma: no cover - depends on the installation
    raise ImportError(
        f"quorumlock.otel needs the OpenTelemetry API: pip install 'quorumlock[otel]' ({exc})"
    ) from exc

from quorumlock import __version__
from quorumlock._algorithm.outcomes import NodeOutcome
from quorumlock._observe import (
    AcquireEvent,
    ExtendEvent,
    LockObserver,
    LostEvent,
    ReleaseEvent,
    RoundEvent,
)

__all__ = ["OpenTelemetryObserver"]

#: Histogram bucket boundaries in seconds: loopback rounds to slow blocking acquires.
SECONDS_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0, 30.0,
)  # fmt: skip

#: Acquire results that mean the servers, not another client, kept the lock away.
_SERVER_TROUBLE = frozenset({"unavailable", "quarantined", "unfenced", "fatal"})


class OpenTelemetryObserver(LockObserver):
    """A :class:`quorumlock.LockObserver` that records spans and metrics (see the module).

    ``tracer_provider`` and ``meter_provider`` default to the global ones. One instance
    can serve several Redlocks.
    """

    def __init__(
        self,
        *,
        tracer_provider: TracerProvider | None = None,
        meter_provider: MeterProvider | None = None,
    ) -> None:
        self._tracer = trace.get_tracer("quorumlock", __version__, tracer_provider)
        meter = metrics.get_meter("quorumlock", __version__, meter_provider)
        self._acquisitions = meter.create_counter(
            "quorumlock.acquisitions", "{acquisition}", "Acquire calls, by result"
        )
        self._acquire_duration = _histogram(
            meter, "quorumlock.acquire.duration", "Duration of acquire calls, every attempt"
        )
        self._extensions = meter.create_counter(
            "quorumlock.extensions", "{extension}", "Extensions and lease renewals"
        )
        self._releases = meter.create_counter("quorumlock.releases", "{release}", "Releases")
        self._losses = meter.create_counter(
            "quorumlock.losses", "{loss}", "Held locks lost, by reason"
        )
        self._server_replies = meter.create_counter(
            "quorumlock.server.replies", "{reply}", "Answers of each server, by reply"
        )
        self._server_duration = _histogram(
            meter, "quorumlock.server.duration", "Latency of each server's answers"
        )

    # LockObserver

    def on_acquire(self, event: AcquireEvent) -> None:
        attributes = _common(event.name, event.outcomes)
        attributes["quorumlock.attempts"] = event.attempts
        attributes["quorumlock.acquired"] = event.acquired
        attributes["quorumlock.result"] = event.result
        if event.fencing_token is not None:
            attributes["quorumlock.fencing_token"] = event.fencing_token
        error = event.result if event.result in _SERVER_TROUBLE else None
        self._span("quorumlock.acquire", event.seconds, attributes, error)
        result = {"quorumlock.result": event.result}
        self._acquisitions.add(1, result)
        self._acquire_duration.record(event.seconds, result)

    def on_extend(self, event: ExtendEvent) -> None:
        attributes = _common(event.name, event.outcomes)
        attributes["quorumlock.extended"] = event.extended
        attributes["quorumlock.renewal"] = event.renewal
        attributes["quorumlock.validity"] = event.validity
        if event.reason:
            attributes["quorumlock.reason"] = event.reason
        error = None if event.extended else event.reason or "not extended"
        self._span("quorumlock.extend", event.seconds, attributes, error)
        self._extensions.add(
            1, {"quorumlock.extended": event.extended, "quorumlock.renewal": event.renewal}
        )

    def on_release(self, event: ReleaseEvent) -> None:
        attributes = _common(event.name, event.outcomes)
        attributes["quorumlock.released"] = event.released
        self._span("quorumlock.release", event.seconds, attributes, None)
        self._releases.add(1, {"quorumlock.released": event.released})

    def on_lost(self, event: LostEvent) -> None:
        self._losses.add(1, {"quorumlock.reason": event.reason})

    def on_round(self, event: RoundEvent) -> None:
        for outcome in event.outcomes:
            attributes = {
                "quorumlock.server": outcome.server,
                "quorumlock.op": event.op,
                "quorumlock.reply": outcome.reply.value,
            }
            self._server_replies.add(1, attributes)
            if outcome.latency is not None:
                self._server_duration.record(outcome.latency, attributes)

    def _span(
        self,
        name: str,
        seconds: float,
        attributes: dict[str, AttributeValue],
        error: str | None,
    ) -> None:
        """A span that ended now and lasted ``seconds``."""
        end = time.time_ns()
        span = self._tracer.start_span(
            name, attributes=attributes, start_time=end - round(seconds * 1e9)
        )
        if error is not None:
            span.set_status(Status(StatusCode.ERROR, error))
        span.end(end_time=end)


def _common(name: str, outcomes: Sequence[NodeOutcome]) -> dict[str, AttributeValue]:
    attributes: dict[str, AttributeValue] = {
        "quorumlock.lock.name": name,
        "quorumlock.servers": [o.server for o in outcomes],
    }
    for reply, count in Counter(o.reply.value for o in outcomes).items():
        attributes[f"quorumlock.replies.{reply.replace(' ', '_')}"] = count
    return attributes


def _histogram(meter: Meter, name: str, description: str) -> Histogram:
    try:
        return meter.create_histogram(
            name, "s", description, explicit_bucket_boundaries_advisory=SECONDS_BUCKETS
        )
    except TypeError:  # opentelemetry-api before bucket advice: the SDK's defaults
        return meter.create_histogram(name, "s", description)
