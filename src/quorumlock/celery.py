"""Celery task singletons: at most one run of a task per key at a time (docs/celery.md).

Installed with the ``celery`` extra (``pip install 'quorumlock[celery]'``); importing
``quorumlock`` alone never imports Celery, this module does::

    from celery import Celery
    from quorumlock import Redlock
    from quorumlock.celery import Singleton, SingletonTask, configure, current_lock

    app = Celery("reports", broker="redis://127.0.0.1:6379/0")
    configure(app, Redlock(["redis://10.0.0.1:6379", "redis://10.0.0.2:6379",
                            "redis://10.0.0.3:6379"]), on_taken="skip")

    @app.task(base=SingletonTask, singleton=Singleton("report:{0}", ttl=30))
    def report(day: str) -> str:
        for part in parts(day):
            current_lock().check()  # LockLost if the lease was lost
            write(part)
        return day

The key is a template over the task's arguments (``"report:{0}"``, ``"user:{user_id}"``)
or, without one, the task's name. With ``mode="run"`` (the default) the worker takes the
lock when the task starts and renews its lease while the task runs: a worker killed
mid-task leaves a lock that expires after its ttl. With ``mode="enqueue"`` the caller
takes the lock in ``apply_async()``/``delay()``, so a duplicate is not even queued; the
lock travels in the message (a :class:`quorumlock.LockHandle` in a header) to the worker
that runs the task, which releases it when the task ends, whatever the outcome (a worker
that discards the message, the task revoked or expired, releases it too).

A task whose lock is taken is skipped (it returns :data:`SKIPPED`, logged), retried with
Celery's own ``retry(countdown=...)``, or fails with :class:`TaskLocked` (a
:class:`quorumlock.LockNotAcquired`): per task, with a project-wide default given to
:func:`configure`. A task whose lease is lost while it runs is told: ``check()`` raises,
it fails at its end with :class:`TaskLockLost`, and with ``on_lost="revoke"`` it is also
revoked (terminated).
"""

from __future__ import annotations

import contextlib
import contextvars
import inspect
import logging
import math
import string
import uuid
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, NoReturn, TypeAlias

try:
    from celery import Celery, Task, signals, signature, states
    from celery.app.task import Context
    from celery.backends.base import DisabledBackend
    from celery.result import AsyncResult, EagerResult
    from kombu.serialization import dumps, loads
except ImportError as exc:  # pragma: no cover - the extra is missing
    raise ImportError(
        f"quorumlock.celery needs Celery: pip install 'quorumlock[celery]' ({exc})"
    ) from exc

from quorumlock._algorithm.config import Duration, bounded_timeout, seconds, shown
from quorumlock._algorithm.handoff import LockHandle
from quorumlock._algorithm.outcomes import NodeOutcome
from quorumlock._exceptions import (
    ConfigurationError,
    LockLost,
    LockNotAcquired,
    QuorumLockError,
    QuorumUnavailable,
)
from quorumlock._sync import Lock, Redlock

__all__ = [
    "HANDLE_HEADER",
    "RETRY_HEADER",
    "RETRY_WAIT",
    "SKIPPED",
    "Mode",
    "OnLost",
    "OnTaken",
    "Singleton",
    "SingletonTask",
    "Singletons",
    "Skipped",
    "TaskLockLost",
    "TaskLocked",
    "configure",
    "current_lock",
]

logger = logging.getLogger("quorumlock.celery")

Mode: TypeAlias = Literal["run", "enqueue"]
"""When the lock is taken: when the task starts on a worker, or when it is queued."""
OnTaken: TypeAlias = Literal["skip", "retry", "raise"]
"""What a task whose lock is taken does: return :data:`SKIPPED`, retry later, or fail."""
OnLost: TypeAlias = Literal["check", "revoke"]
"""How a running task is told its lease was lost: at its next ``check()`` (and at its
end), or also by Celery's revoke with terminate (prefork pool)."""


class TaskLocked(LockNotAcquired):
    """A singleton task's lock was taken (``on_taken="raise"``): raised by the run, or by
    ``delay()``/``apply_async()`` in enqueue mode. A :class:`quorumlock.LockNotAcquired`
    whose constructor also takes the message alone (``.name`` is then empty); Celery's
    result backends rebuild it with its name, as every quorumlock exception."""

    def __init__(
        self, message: str, name: str = "", *, outcomes: Sequence[NodeOutcome] = ()
    ) -> None:
        super().__init__(message, name, outcomes=outcomes)


class TaskLockLost(LockLost):
    """A singleton task's lease was lost while it ran: raised at the end of the run, and
    in place of a :class:`quorumlock.LockLost` of the task's own lock that its body let
    escape (inside the body, ``current_lock().check()`` raises the plain one). A
    :class:`quorumlock.LockLost` whose constructor also takes the message alone (see
    :class:`TaskLocked`)."""

    def __init__(
        self, message: str, name: str = "", *, outcomes: Sequence[NodeOutcome] = ()
    ) -> None:
        super().__init__(message, name, outcomes=outcomes)


_MODES: Final = ("run", "enqueue")
_ON_TAKEN: Final = ("skip", "retry", "raise")
_ON_LOST: Final = ("check", "revoke")

#: The message header that carries the lock of an enqueue-mode task to its worker.
HANDLE_HEADER: Final = "quorumlock_handle"

#: The message header of a retry that a run queued while it held the task's lock
#: (``self.retry()``): the retried run waits up to :data:`RETRY_WAIT` seconds for that
#: run to end and release it, instead of taking it for a duplicate's lock.
RETRY_HEADER: Final = "quorumlock_retry"

#: How long such a retried run waits for the run that queued it (seconds): that run
#: releases the lock as soon as its ``retry()`` raises, nearly always within
#: milliseconds; past the wait, ``on_taken`` applies.
RETRY_WAIT: Final = 5.0


class Skipped(str):
    """The type of :data:`SKIPPED`. A ``str``, so that it survives any result backend's
    serializer (JSON included): ``result.get() == SKIPPED`` holds on the caller's side."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "quorumlock.celery.SKIPPED"


#: What a skipped task returns (and the result of ``delay()`` of an enqueue-mode task for
#: a duplicate that was not queued).
SKIPPED: Final = Skipped("quorumlock.celery.skipped")


def _option(value: object, allowed: tuple[str, ...], what: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {value!r}")
    if value not in allowed:
        raise ConfigurationError(
            f"{what} must be one of {', '.join(map(repr, allowed))}, not {value!r}"
        )


def _fields(template: str) -> list[str]:
    """The field names of a ``str.format`` template; ConfigurationError if malformed."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ConfigurationError(f"key template {template!r} is malformed: {exc}") from None
    names = []
    for _, name, _, _ in parsed:
        if name is None:
            continue
        if name == "":
            raise ConfigurationError(
                f"key template {template!r} has an empty field {{}}: name the argument, "
                "by position ({0}) or by name ({user_id})"
            )
        names.append(name)
    return names


@dataclass(frozen=True, slots=True)
class Singleton:
    """How one task is made a singleton: give it to ``app.task(base=SingletonTask,
    singleton=Singleton(...))``. Every option left at None takes the project-wide value
    given to :func:`configure`.

    - ``key``: a ``str.format`` template over the task's arguments, by position
      (``"report:{0}"``) or by name (``"user:{user_id}"``, whether the argument is passed
      by position or by keyword); None: the task's name, one run at a time in all.
    - ``mode``: ``"run"`` (the worker takes the lock when the task starts) or
      ``"enqueue"`` (``delay()``/``apply_async()`` takes it: duplicates are not queued).
    - ``on_taken``: ``"skip"``, ``"retry"`` (run mode only) or ``"raise"``.
    - ``ttl``: the lock's ttl, seconds; renewed while the task runs, and the time a
      killed worker's lock stays. In enqueue mode the lock must also outlast the wait in
      the queue (at most the Redlock's ``max_ttl``): a handle that expired there is
      replaced by an acquire at run time.
    - ``keep``: after a successful run, keep the lock this many more seconds instead of
      releasing it (no run of the same key starts meanwhile); 0: release at once.
    - ``countdown``: the delay of a retry (``on_taken="retry"``), seconds.
    - ``on_lost``: ``"check"`` (``current_lock().check()`` raises once the lease is lost,
      and the task fails at its end) or ``"revoke"`` (also revoke the task with
      ``terminate=True``: the prefork pool ends the process that runs it).

    Raises ``TypeError`` or :class:`quorumlock.ConfigurationError` for bad values.
    """

    key: str | None = None
    mode: Mode = "run"
    on_taken: OnTaken | None = None
    ttl: Duration | None = None
    keep: Duration = 0.0
    countdown: Duration | None = None
    on_lost: OnLost | None = None
    _fields: tuple[str, ...] = field(default=(), init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.key is not None:
            if not isinstance(self.key, str):
                raise TypeError(f"key must be a str template or None, not {self.key!r}")
            if not self.key:
                raise ConfigurationError("key must not be empty: give None for the task name")
            object.__setattr__(self, "_fields", tuple(_fields(self.key)))
        _option(self.mode, _MODES, "mode")
        if self.on_taken is not None:
            _option(self.on_taken, _ON_TAKEN, "on_taken")
        if self.on_taken == "retry" and self.mode == "enqueue":
            raise ConfigurationError(_RETRY_AT_ENQUEUE)
        if self.ttl is not None:
            seconds(self.ttl, "ttl")
        seconds(self.keep, "keep", allow_zero=True)
        if self.countdown is not None:
            seconds(self.countdown, "countdown", allow_zero=True)
        if self.on_lost is not None:
            _option(self.on_lost, _ON_LOST, "on_lost")


_RETRY_AT_ENQUEUE: Final = (
    "on_taken='retry' needs mode='run': in enqueue mode a duplicate is refused by "
    "delay()/apply_async() before there is a task to retry (use 'skip' or 'raise')"
)


class Singletons:
    """The project-wide settings of an app's singleton tasks (made by :func:`configure`).

    ``redlock`` takes the locks; ``on_taken``, ``ttl``, ``countdown`` and ``on_lost``
    are the defaults of :class:`Singleton`; ``max_hold`` bounds how long a running task's lease
    is renewed (``math.inf``: as long as it runs; set Celery's ``time_limit`` so that a
    hung task ends); ``clock_skew`` is the most the wall clocks of the machines that
    enqueue and those that run may differ (enqueue mode, see ``Redlock.adopt``).
    """

    def __init__(
        self,
        redlock: Redlock,
        *,
        on_taken: OnTaken = "skip",
        ttl: Duration = 30.0,
        countdown: Duration = 10.0,
        on_lost: OnLost = "check",
        max_hold: Duration = math.inf,
        clock_skew: Duration = 0.0,
    ) -> None:
        if not isinstance(redlock, Redlock):
            raise TypeError(f"redlock must be a quorumlock.Redlock (the sync one), not {redlock!r}")
        _option(on_taken, _ON_TAKEN, "on_taken")
        _option(on_lost, _ON_LOST, "on_lost")
        self.redlock = redlock
        self.on_lost: OnLost = on_lost
        self.on_taken: OnTaken = on_taken
        self.ttl = seconds(ttl, "ttl")
        self.countdown = seconds(countdown, "countdown", allow_zero=True)
        hold = max_hold
        self.max_hold = (
            math.inf if isinstance(hold, float) and hold == math.inf else seconds(hold, "max_hold")
        )
        self.clock_skew = bounded_timeout(clock_skew, "clock_skew", allow_zero=True)
        max_ttl = redlock.config.max_ttl
        if max_ttl is not None and self.ttl > max_ttl:
            raise ConfigurationError(
                f"ttl={self.ttl:g} s exceeds the Redlock's max_ttl={max_ttl:g} s"
            )
        if self.max_hold < self.ttl:
            raise ConfigurationError(_hold_below_ttl(self.max_hold, self.ttl))


def _hold_below_ttl(max_hold: float, ttl: float) -> str:
    return (
        f"max_hold={max_hold:g} s is shorter than ttl={ttl:g} s: a task's lock holds for "
        "its ttl before any renewal; give a max_hold of at least the ttl"
    )


_SETTINGS: weakref.WeakKeyDictionary[Celery, Singletons] = weakref.WeakKeyDictionary()


def configure(
    app: Celery,
    redlock: Redlock,
    *,
    on_taken: OnTaken = "skip",
    ttl: Duration = 30.0,
    countdown: Duration = 10.0,
    on_lost: OnLost = "check",
    max_hold: Duration = math.inf,
    clock_skew: Duration = 0.0,
) -> Singletons:
    """Set the Redlock and the project-wide defaults of ``app``'s singleton tasks (see
    :class:`Singletons`). Call it where the app is made, so that every worker and every
    process that enqueues runs it. Calling it again replaces the settings."""
    if not isinstance(app, Celery):
        raise TypeError(f"app must be a celery.Celery, not {app!r}")
    settings = Singletons(
        redlock,
        on_taken=on_taken,
        ttl=ttl,
        countdown=countdown,
        on_lost=on_lost,
        max_hold=max_hold,
        clock_skew=clock_skew,
    )
    _SETTINGS[app] = settings
    return settings


#: The lock of the singleton task running in this thread (None: none runs).
_CURRENT: contextvars.ContextVar[Lock | None] = contextvars.ContextVar(
    "quorumlock_celery_lock", default=None
)


#: The tokens of the enqueue-mode locks that a run in this thread took over from the
#: ``apply_async`` under way (an eager run, inside the call): that call does not
#: release them when the run's error comes out of it (the run released them).
_TAKEN_OVER: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar(
    "quorumlock_celery_taken_over", default=None
)


#: The error that the run in this thread fails with, raised from inside Celery's autoretry
#: wrapper of the task's ``run`` (see ``SingletonTask._unavailable``).
_PENDING: contextvars.ContextVar[BaseException | None] = contextvars.ContextVar(
    "quorumlock_celery_pending", default=None
)


class _Guarded:
    """A task's ``_orig_run`` (the body that Celery's ``autoretry_for`` wrapper calls)
    that raises the error pending in this thread, if any, instead of running the body."""

    __slots__ = ("body",)

    def __init__(self, body: Callable[..., Any]) -> None:
        self.body = body

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        pending = _PENDING.get()
        if pending is not None:
            raise pending
        return self.body(*args, **kwargs)


def _holding() -> bool:
    """Whether a singleton task's run in this thread holds its lock now."""
    lock = _CURRENT.get()
    return lock is not None and lock.held


def current_lock() -> Lock:
    """The lock held by the singleton task running in this thread.

    Call ``current_lock().check()`` before each step that must run under the lock: it
    raises :class:`quorumlock.LockLost` once the lease was lost. Raises
    ``RuntimeError`` outside a singleton task.
    """
    lock = _CURRENT.get()
    if lock is None:
        raise RuntimeError("no quorumlock singleton task is running in this thread")
    return lock


@dataclass(frozen=True, slots=True)
class _Plan:
    """A task's singleton options merged with the project's defaults, checked."""

    settings: Singletons
    template: str
    by_name: bool  # the key is the task's name: no template over the arguments
    fields: tuple[str, ...]  # the template's fields ("0", "user_id", "0.attr", ...)
    signature: inspect.Signature
    mode: Mode
    on_taken: OnTaken
    ttl: float
    keep: float
    countdown: float
    on_lost: OnLost

    def name(
        self, args: Sequence[Any], kwargs: Mapping[str, Any], serializer: str | None = None
    ) -> str:
        """The lock's name for a call, its values as a worker decodes them from a
        message in ``serializer`` (the task's: see :func:`_as_sent`)."""
        if self.by_name:
            return self.template
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        positional: list[Any] = []
        named: dict[str, Any] = {}
        for param in self.signature.parameters.values():
            if param.name not in bound.arguments:
                continue
            value = bound.arguments[param.name]
            if param.kind is param.VAR_POSITIONAL:
                positional.extend(value)
            elif param.kind is param.VAR_KEYWORD:
                named.update(value)
            else:
                if param.kind is not param.KEYWORD_ONLY:
                    positional.append(value)
                named[param.name] = value
        # the arguments the fields name: "0" of "0.attr", "user_id" of "user_id[2]"
        bases = [name.split(".", 1)[0].split("[", 1)[0] for name in self.fields]
        for base in bases:  # one that *args or **kwargs may not have filled
            if int(base) >= len(positional) if base.isdigit() else base not in named:
                raise ConfigurationError(
                    f"key template {self.template!r} uses {{{base}}}, an argument this "
                    "call does not pass"
                )
        if serializer is not None:
            for base in bases:  # only the values the template reads: others may be large
                if base.isdigit():
                    positional[int(base)] = _as_sent(positional[int(base)], serializer)
                else:
                    named[base] = _as_sent(named[base], serializer)
        return self.template.format(*positional, **named)


def _as_sent(value: Any, serializer: str) -> Any:
    """``value`` as a worker decodes it from a message in ``serializer``: JSON makes a
    tuple a list and a ``str`` enum member its value, so that a key formatted from the
    caller's value would name another lock than the worker's. A value the serializer
    refuses is kept (the task cannot be sent with it either)."""
    try:
        content_type, encoding, data = dumps(value, serializer=serializer)
        return loads(data, content_type, encoding)
    except Exception:
        return value


def _raise_lost(exc: LockLost, lock: Lock) -> NoReturn:
    """Raise a loss of the task's own lock as a :class:`TaskLockLost` (which the result
    backends can rebuild); another lock's loss as it is."""
    if isinstance(exc, TaskLockLost) or exc.name != lock.name:
        raise exc
    raise TaskLockLost(str(exc), name=exc.name, outcomes=exc.outcomes) from exc


def _check_fields(task_name: str, spec: Singleton, signature: inspect.Signature) -> None:
    """Every field of the key template names an argument of the task."""
    params = list(signature.parameters.values())
    by_position = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    var_positional = any(p.kind is p.VAR_POSITIONAL for p in params)
    var_keyword = any(p.kind is p.VAR_KEYWORD for p in params)
    names = {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    for field_name in spec._fields:
        base = field_name.split(".", 1)[0].split("[", 1)[0]
        if base.isdigit():
            if int(base) >= len(by_position) and not var_positional:
                raise ConfigurationError(
                    f"key template {spec.key!r} of task {task_name} uses argument {{{base}}}, "
                    f"but the task takes {len(by_position)} positional argument(s)"
                )
        elif base not in names and not var_keyword:
            raise ConfigurationError(
                f"key template {spec.key!r} of task {task_name} uses {{{base}}}, which is "
                f"not an argument of the task ({', '.join(sorted(names)) or 'none'})"
            )


if TYPE_CHECKING:  # celery-types makes Task generic; Celery's own class is not
    _Task = Task[Any, Any]
else:
    _Task = Task


class SingletonTask(_Task):
    """The base class of singleton tasks: ``@app.task(base=SingletonTask,
    singleton=Singleton(...))``. Without ``singleton`` the key is the task's name and
    every option is the project's default (:func:`configure`)."""

    singleton: Singleton | None = None

    _plan_cache: _Plan | None = None

    def _plan(self) -> _Plan:
        settings = _SETTINGS.get(self.app)
        plan = self._plan_cache
        if plan is not None and plan.settings is settings:
            return plan
        if settings is None:
            raise ConfigurationError(
                f"task {self.name} is a SingletonTask, but quorumlock.celery.configure(app, "
                "redlock) was not called for its app"
            )
        spec = self.singleton if self.singleton is not None else Singleton()
        if not isinstance(spec, Singleton):
            raise TypeError(
                f"the singleton option of task {self.name} must be a "
                f"quorumlock.celery.Singleton, not {spec!r}"
            )
        signature = inspect.signature(self.run)
        _check_fields(self.name, spec, signature)
        on_taken = spec.on_taken if spec.on_taken is not None else settings.on_taken
        if on_taken == "retry" and spec.mode == "enqueue":
            raise ConfigurationError(f"task {self.name}: {_RETRY_AT_ENQUEUE}")
        ttl = seconds(spec.ttl, "ttl") if spec.ttl is not None else settings.ttl
        if settings.max_hold < ttl:
            raise ConfigurationError(f"task {self.name}: {_hold_below_ttl(settings.max_hold, ttl)}")
        keep = seconds(spec.keep, "keep", allow_zero=True)
        max_ttl = settings.redlock.config.max_ttl
        for value, what in ((ttl, "ttl"), (keep, "keep")):
            if max_ttl is not None and value > max_ttl:
                raise ConfigurationError(
                    f"task {self.name}: {what}={value:g} s exceeds the Redlock's "
                    f"max_ttl={max_ttl:g} s"
                )
        plan = _Plan(
            settings=settings,
            template=spec.key if spec.key is not None else self.name,
            by_name=spec.key is None,
            fields=spec._fields,
            signature=signature,
            mode=spec.mode,
            on_taken=on_taken,
            ttl=ttl,
            keep=keep,
            countdown=(
                seconds(spec.countdown, "countdown", allow_zero=True)
                if spec.countdown is not None
                else settings.countdown
            ),
            on_lost=spec.on_lost if spec.on_lost is not None else settings.on_lost,
        )
        self._plan_cache = plan
        return plan

    # The worker's side: the task runs holding the lock.

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        plan = self._plan()
        # A run's arguments came decoded from its message (in whatever serializer it was
        # sent); a direct call's are the caller's own, formatted as a worker would see
        # them after the task's serializer.
        serializer = self.serializer if self.request.called_directly else None
        name = plan.name(args, kwargs, serializer)
        redlock = plan.settings.redlock
        on_lost = self._revoker() if plan.on_lost == "revoke" else None
        outer = _CURRENT.get()  # a singleton task's, calling this one directly
        lock = self._adopt(plan, name, on_lost)
        if lock is None:
            # a retry queued by a run that held the lock: that run may not have ended yet
            after_run = self._header(RETRY_HEADER) is not None
            lock = redlock.lock(
                name,
                ttl=plan.ttl,
                blocking=after_run,
                timeout=RETRY_WAIT if after_run else None,
                auto_extend=True,
                max_hold=plan.settings.max_hold,
                on_lost=on_lost,
            )
            try:
                lock.__enter__()
            except QuorumUnavailable as exc:
                self._unavailable(exc, args, kwargs)
            except LockNotAcquired:
                return self._taken(plan, name, lock)
            except BaseException as exc:  # cut short (a soft time limit) as it returned
                lock.__exit__(type(exc), exc, exc.__traceback__)
                raise
        else:
            try:
                lock.__enter__()  # held already: enters without acquiring
            except LockLost as exc:
                _raise_lost(exc, lock)
            except BaseException as exc:
                lock.__exit__(type(exc), exc, exc.__traceback__)
                raise
        # From here to the lock's release, whatever cuts the run short (a soft time
        # limit, raised by the worker's signal handler at any point) releases the lock,
        # and current_lock() no longer names it: one outside these try blocks would
        # leave the lock held, renewed by its lease, with current_lock() keeping it.
        try:
            _CURRENT.set(lock)
            try:
                result = super().__call__(*args, **kwargs)
            finally:
                _CURRENT.set(outer)
        except LockLost as exc:
            _CURRENT.set(outer)
            lock.__exit__(type(exc), exc, exc.__traceback__)
            _raise_lost(exc, lock)
        except BaseException as exc:
            _CURRENT.set(outer)
            lock.__exit__(type(exc), exc, exc.__traceback__)
            raise
        try:
            if plan.keep > 0:
                self._keep(lock, plan.keep)
            lock.__exit__(None, None, None)  # LockLost if the task ran without the lock
        except LockLost as exc:
            _raise_lost(exc, lock)
        except BaseException as exc:
            lock.__exit__(type(exc), exc, exc.__traceback__)
            raise
        return result

    def _unavailable(
        self, exc: QuorumUnavailable, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> NoReturn:
        """Fail the run with ``exc`` (its lock could not be decided) from inside Celery's
        ``autoretry_for`` wrapper of ``run`` where the task has one: the lock is taken
        before the body, outside that wrapper, and ``autoretry_for=(QuorumUnavailable,)``
        (with its backoff and ``max_retries``) must apply to it as to the body's errors."""
        body = getattr(self, "_orig_run", None)  # set by Celery for autoretry_for
        if body is None:
            raise exc
        if not isinstance(body, _Guarded):
            self._orig_run = _Guarded(body)
        token = _PENDING.set(exc)
        try:
            self.run(*args, **kwargs)  # raises exc, or the Retry that autoretry made of it
        finally:
            _PENDING.reset(token)
        raise exc  # (run was replaced by something that does not call _orig_run)

    def _revoker(self) -> Callable[[Lock], object] | None:
        """``on_lost`` for ``on_lost="revoke"``: revoke this run, terminating it."""
        task_id = self.request.id
        if task_id is None:  # a direct call: nothing to revoke, check() still tells
            return None
        app = self.app

        def revoke(lock: Lock) -> None:
            logger.warning(
                "task %s[%s]: lease of lock %s lost; revoking the task (terminate)",
                self.name,
                task_id,
                shown(lock.name),
            )
            app.control.revoke(task_id, terminate=True, signal="SIGTERM")

        return revoke

    def _adopt(
        self, plan: _Plan, name: str, on_lost: Callable[[Lock], object] | None
    ) -> Lock | None:
        """The lock an enqueue-mode caller passed in the message, or None: no handle, or
        one that expired in the queue (then the task acquires as in run mode)."""
        data = self._handle_data()
        if data is None:
            return None
        settings = plan.settings
        handle = LockHandle.from_dict(data)
        taken_over = _TAKEN_OVER.get()
        if taken_over is not None:  # an eager run: the lock is this run's to end now
            taken_over.append(handle.token)
        if handle.name != name:
            # Not this run's lock (a message made by hand, or a key template changed
            # between the enqueuer's code and the worker's): give it back, then fail.
            with contextlib.suppress(QuorumLockError):
                settings.redlock.adopt(handle, clock_skew=settings.clock_skew).release()
            raise ConfigurationError(
                f"task {self.name}: the message carries the lock {shown(handle.name)}, but the "
                f"task's key is {shown(name)}; that lock was released"
            )
        try:
            lock = settings.redlock.adopt(
                handle,
                auto_extend=True,
                max_hold=settings.max_hold,
                on_lost=on_lost,
                clock_skew=settings.clock_skew,
            )
        except LockLost as exc:
            logger.warning(
                "task %s[%s]: the lock taken at enqueue expired in the queue (%s); acquiring "
                "it again (a ttl longer than the wait in the queue keeps duplicates out)",
                self.name,
                self.request.id,
                exc,
            )
            return None
        try:
            lock.extend()  # a validity measured here, and proof the keys are still ours
        except LockLost as exc:
            logger.warning(
                "task %s[%s]: the lock taken at enqueue was lost in the queue (%s); "
                "acquiring it again",
                self.name,
                self.request.id,
                exc,
            )
            return None
        return lock

    def _handle_data(self) -> Mapping[str, Any] | None:
        data = self._header(HANDLE_HEADER)
        return data if isinstance(data, Mapping) else None

    def _header(self, name: str) -> Any:
        """Header ``name`` of the message this run came from (None: absent)."""
        return _header_of(self.request, name)

    def _release_discarded(self, request: Any) -> None:
        """A worker discarded a message of this task without running it (revoked, or
        expired): the lock it carries (enqueue mode) would otherwise stay until its ttl,
        and every enqueue meanwhile would be skipped as a duplicate of nothing."""
        data = _header_of(request, HANDLE_HEADER)
        settings = _SETTINGS.get(self.app)
        if not isinstance(data, Mapping) or settings is None:
            return
        try:
            handle = LockHandle.from_dict(data)
            settings.redlock.adopt(handle, clock_skew=settings.clock_skew).release()
        except QuorumLockError as exc:  # expired in the queue already, or not released
            logger.warning(
                "task %s[%s] discarded; its lock was not released (%s)",
                self.name,
                getattr(request, "id", None),
                exc,
            )
            return
        logger.info(
            "task %s[%s] discarded (revoked or expired): lock %s released",
            self.name,
            getattr(request, "id", None),
            shown(handle.name),
        )

    def _taken(self, plan: _Plan, name: str, lock: Lock) -> Any:
        """The lock of this run is held by another: skip, retry or fail."""
        if plan.on_taken == "skip":
            logger.info(
                "task %s[%s] skipped: lock %s is held by another run",
                self.name,
                self.request.id,
                shown(name),
            )
            return SKIPPED
        if plan.on_taken == "retry":
            logger.info(
                "task %s[%s]: lock %s is held by another run; retrying in %g s",
                self.name,
                self.request.id,
                shown(name),
                plan.countdown,
            )
            raise self.retry(countdown=plan.countdown)
        raise TaskLocked(
            f"task {self.name}: lock {shown(name)} is held by another run",
            name=name,
            outcomes=lock.outcomes,
        )

    def _keep(self, lock: Lock, keep: float) -> None:
        """After a success: the lock stays for ``keep`` s from now, then expires."""
        try:
            lock.extend(ttl=keep)
        except LockLost:
            return  # the end of the block reports the loss
        lock.export()  # this object stops holding it, without releasing it

    # The caller's side: enqueue mode takes the lock before the message is sent.

    def apply_async(  # noqa: PLR0917 - Celery's signature
        self,
        args: Sequence[Any] | None = None,
        kwargs: Mapping[str, Any] | None = None,
        task_id: str | None = None,
        producer: Any = None,
        link: Any = None,
        link_error: Any = None,
        shadow: str | None = None,
        **options: Any,
    ) -> AsyncResult[Any]:
        """Queue the task; in enqueue mode, take its lock first: a duplicate of a task
        queued or running is not queued, and per ``on_taken`` the call returns a result
        that is already :data:`SKIPPED` (an ``EagerResult`` under the caller's
        ``task_id``: ``.get()`` returns it at once; the result backend has it too, and
        the task's callbacks and chain go on with it) or raises :class:`TaskLocked`."""
        plan = self._plan()
        sent = {
            "task_id": task_id,
            "producer": producer,
            "link": link,
            "link_error": link_error,
            "shadow": shadow,
            **options,
        }
        headers = dict(options.get("headers") or {})
        headers.pop(HANDLE_HEADER, None)  # a retry's copies of the original message's
        headers.pop(RETRY_HEADER, None)
        call_args = None if args is None else tuple(args)
        call_kwargs = None if kwargs is None else dict(kwargs)
        retrying = task_id is not None and task_id == self.request.id
        if retrying and _holding():
            # This run holds the lock until it ends, after the retry is queued: the
            # retried run waits for that end, where a duplicate would not.
            headers[RETRY_HEADER] = True
        sent["headers"] = headers or None
        if plan.mode != "enqueue" or retrying:
            # A retry of a running enqueue-mode task is queued as it is: that run holds
            # the lock until it ends, and the retry acquires at run time.
            return super().apply_async(call_args, call_kwargs, **sent)
        serializer = options.get("serializer") or self.serializer
        name = plan.name(call_args or (), call_kwargs or {}, serializer)
        lock = plan.settings.redlock.lock(name, ttl=plan.ttl)
        if not lock.acquire(blocking=False):
            if plan.on_taken == "skip":
                logger.info("task %s not queued: lock %s is held", self.name, shown(name))
                return self._skipped(call_args or (), call_kwargs or {}, sent)
            raise TaskLocked(
                f"task {self.name} not queued: lock {shown(name)} is held",
                name=name,
                outcomes=lock.outcomes,
            )
        taken_over: list[str] = []
        context = _TAKEN_OVER.set(taken_over)
        try:
            # keep=True: this object can still release the lock if the send fails.
            sent["headers"] = {**headers, HANDLE_HEADER: lock.export(keep=True).to_dict()}
            result = super().apply_async(call_args, call_kwargs, **sent)
        except BaseException:
            if lock.token not in taken_over:  # not queued, nor run here: nobody else will
                lock.release()
            raise
        finally:
            _TAKEN_OVER.reset(context)
        if lock.held:  # (an eager run, in this process, may have outlasted the ttl)
            lock.export()  # this object lets go without releasing: the task's run releases it
        return result

    def _skipped(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], sent: Mapping[str, Any]
    ) -> EagerResult[Any]:
        """A duplicate that is not queued ends as a run skipped on a worker does: SKIPPED
        under the caller's task id, stored in the result backend (``AsyncResult(id)``, a
        group and a chord wait for it there), its callbacks and the rest of its chain
        sent on with it."""
        task_id = sent.get("task_id") or str(uuid.uuid4())
        root_id = sent.get("root_id") or task_id
        for callback in _listed(sent.get("link")):
            signature(callback, app=self.app).apply_async(
                (SKIPPED,), parent_id=task_id, root_id=root_id
            )
        chain = sent.get("chain")
        if chain:
            signature(chain[-1], app=self.app).apply_async(
                (SKIPPED,), chain=chain[:-1], parent_id=task_id, root_id=root_id
            )
        if not isinstance(self.backend, DisabledBackend):
            request = Context(
                id=task_id,
                task=self.name,
                args=args,
                kwargs=kwargs,
                group=sent.get("group_id"),
                group_index=sent.get("group_index"),
                chord=sent.get("chord"),
                root_id=root_id,
                parent_id=sent.get("parent_id"),
                ignore_result=bool(sent.get("ignore_result", self.ignore_result)),
                delivery_info={},
            )
            self.backend.mark_as_done(task_id, SKIPPED, request=request)
        return EagerResult(task_id, SKIPPED, states.SUCCESS, name=self.name)


def _header_of(request: Any, name: str) -> Any:
    """Header ``name`` of a task's request (None: absent)."""
    value = getattr(request, name, None)
    if value is None:
        headers = getattr(request, "headers", None)
        if isinstance(headers, Mapping):
            value = headers.get(name)
    return value


def _on_revoked(
    sender: object = None, request: Any = None, terminated: bool = False, **_: Any
) -> None:
    """Celery's ``task_revoked``: a singleton task's message was discarded. A run that
    was terminated (``revoke(terminate=True)``) is left alone: its process may not have
    ended yet, and its lock expires after the ttl as a killed worker's does."""
    if isinstance(sender, SingletonTask) and request is not None and not terminated:
        sender._release_discarded(request)


signals.task_revoked.connect(_on_revoked, weak=False, dispatch_uid="quorumlock.celery.revoked")


def _listed(value: object) -> list[Any]:
    """A ``link`` option as a list: None, one signature, or several."""
    if value is None:
        return []
    return list(value) if isinstance(value, list | tuple) else [value]
