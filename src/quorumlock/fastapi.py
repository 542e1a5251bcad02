"""FastAPI and Starlette: a lifespan that owns the asyncio Redlock, and a dependency that
holds a lock for the length of a request (docs/fastapi.md).

::

    from typing import Annotated
    from fastapi import Depends, FastAPI
    from quorumlock.asyncio import Lock
    from quorumlock.fastapi import lifespan, locked

    app = FastAPI(lifespan=lifespan(["redis://a:6379", "redis://b:6379", "redis://c:6379"]))

    @app.post("/orders/{order_id}/pay")
    async def pay(order_id: int, lock: Annotated[Lock, Depends(locked("orders:{order_id}",
                                                                      ttl=10, timeout=2))]):
        ...  # one request per order at a time, on every worker and machine

Only Starlette is imported (FastAPI is built on it and handles its ``HTTPException``),
and only when this module is.
"""

from __future__ import annotations

import enum
import logging
import typing
import warnings
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Final, Literal, TypeAlias, Unpack, cast

from starlette.exceptions import HTTPException
from starlette.requests import HTTPConnection

from quorumlock._algorithm.config import (
    Duration,
    LockOptions,
    RedlockConfig,
    shown,
    validate_name,
)
from quorumlock._exceptions import ConfigurationError, LockLost, LockNotAcquired, QuorumUnavailable
from quorumlock._frontend import is_async_callable
from quorumlock._integration import NameTemplate, RedlockOptions
from quorumlock._io.servers import AsyncServerArg
from quorumlock.asyncio import Lock, Redlock

logger = logging.getLogger("quorumlock")

__all__ = [
    "STATE_KEY",
    "InnerLifespan",
    "Lifespan",
    "RedlockOptions",
    "get_redlock",
    "lifespan",
    "locked",
]

STATE_KEY: Final = "quorumlock"
"""The name of the Redlock in the lifespan state (``request.state``) and ``app.state``."""

Lifespan: TypeAlias = Callable[[Any], AbstractAsyncContextManager[Mapping[str, Any]]]
"""What :func:`lifespan` returns, for ``FastAPI(lifespan=...)`` or ``Starlette(lifespan=...)``."""

InnerLifespan: TypeAlias = Callable[[Any], AbstractAsyncContextManager[Mapping[str, Any] | None]]
"""The application's own lifespan, with or without a state of its own."""

BusyStatus: TypeAlias = Literal[409, 423, 429, 503]


def lifespan(
    servers: AsyncServerArg | Sequence[AsyncServerArg],
    *,
    inner: InnerLifespan | None = None,
    **options: Unpack[RedlockOptions],
) -> Lifespan:
    """A lifespan that creates the asyncio :class:`~quorumlock.asyncio.Redlock` at
    startup and closes it at shutdown.

    ``servers`` and ``options`` are those of ``Redlock`` (checked here, before the app
    starts: :class:`ConfigurationError` for bad ones). The Redlock is put in the lifespan
    state and in ``app.state`` under :data:`STATE_KEY`, where :func:`locked` and
    :func:`get_redlock` find it. ``inner`` is the application's own lifespan, run
    inside this one (so the Redlock exists for all of it); the state it yields is
    merged into the state.
    """
    # A first Redlock here checks the arguments at once; it opens no connection. Its
    # warnings (an even number of servers) are left to the one made at startup.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        Redlock(servers, **options)

    @asynccontextmanager
    async def run(app: Any) -> AsyncIterator[dict[str, Any]]:
        redlock = Redlock(servers, **options)
        state = getattr(app, "state", None)
        if state is not None:
            setattr(state, STATE_KEY, redlock)
        try:
            if inner is None:
                yield {STATE_KEY: redlock}
            else:
                async with inner(app) as own:
                    yield {**(own or {}), STATE_KEY: redlock}
        finally:
            if state is not None and getattr(state, STATE_KEY, None) is redlock:
                delattr(state, STATE_KEY)
            await redlock.close()

    return run


def get_redlock(connection: HTTPConnection) -> Redlock:
    """The Redlock of :func:`lifespan` (a dependency too: ``Depends(get_redlock)``).

    Raises :class:`RuntimeError` when the app was not started with it.
    """
    found = getattr(connection.state, STATE_KEY, None)
    if found is None:
        found = getattr(connection.app.state, STATE_KEY, None)
    if not isinstance(found, Redlock):
        raise RuntimeError(
            "no quorumlock Redlock for this app: start it with "
            "FastAPI(lifespan=quorumlock.fastapi.lifespan(servers)), or pass redlock= to "
            "locked()"
        )
    return found


def locked(
    name: str,
    *,
    ttl: Duration,
    timeout: Duration | None = 0.0,
    max_hold: Duration | None = None,
    status_code: BusyStatus = 409,
    lost_status_code: int = 503,
    redlock: Redlock | None = None,
) -> Callable[[HTTPConnection], AsyncIterator[Lock]]:
    """A dependency that holds the lock ``name`` while the request is handled.

    ``name`` is a template: ``{field}`` is replaced by the request's path parameter of
    that name, else its query parameter (``"orders:{order_id}"``), converted to the type
    the handler declares for it (``/orders/08`` locks ``orders:8`` for ``order_id:
    int``); a request without one is answered 422. The lock is acquired before the
    handler runs, waiting up to ``timeout`` seconds (0, the default: one attempt; None:
    no limit) and released after the response is sent (with ``Depends(...,
    scope="function")``: before it is sent).

    - Taken for all of ``timeout``: the request is answered ``status_code`` (409
      Conflict by default; 423 Locked, 429 or 503 if you prefer), and the handler does
      not run.
    - Too few servers usable (:class:`QuorumUnavailable`): 503.
    - The lock is a lease of ``ttl`` seconds; with ``max_hold`` it is renewed while the
      request runs, up to ``max_hold`` seconds (``math.inf``: no limit). If it is lost
      (the ttl or ``max_hold`` ran out, or the renewals failed), the handler is
      cancelled at its next ``await`` and the request is answered
      ``lost_status_code`` (503) if no response was started. A sync handler
      (``def``, run in a thread) cannot be interrupted: its ``lock.check()`` raises
      :class:`LockLost`, which is answered ``lost_status_code`` too.

    The handler receives the held :class:`quorumlock.asyncio.Lock` (for
    ``lock.check()``, ``lock.fencing_token``). Every option is checked here, when the
    route is declared: :class:`ConfigurationError` or ``TypeError`` for bad input.
    """
    template = NameTemplate(name)
    if redlock is not None and not isinstance(redlock, Redlock):
        raise TypeError(
            f"redlock must be a quorumlock.asyncio.Redlock (the lock is held across awaits), "
            f"not {redlock!r}"
        )
    if status_code not in (409, 423, 429, 503):
        raise ConfigurationError(
            f"status_code must be 409, 423, 429 or 503, not {status_code!r}: the request "
            "was refused because the lock is taken"
        )
    if not (isinstance(lost_status_code, int) and 500 <= lost_status_code <= 599):
        raise ConfigurationError(
            f"lost_status_code must be a 5xx status, not {lost_status_code!r}: the server "
            "could not finish the request under the lock"
        )
    # The checks rl.lock() makes per request, made now on a stand-in name (against the
    # Redlock's max_ttl when it is known already; the lifespan's is checked per request).
    LockOptions.build(
        redlock.config if redlock is not None else RedlockConfig(max_ttl=None),
        "quorumlock-check",
        ttl=ttl,
        timeout=timeout,
        blocking=True,
        auto_extend=max_hold is not None,
        max_extensions=None,
        max_hold=max_hold,
        on_lost=None,
    )

    typed: dict[tuple[object, str], Callable[[object], object] | None] = {}

    async def hold(request: HTTPConnection) -> AsyncIterator[Lock]:
        values: dict[str, object] = {**request.query_params, **request.path_params}
        # The values as the handler receives them: "/orders/08" and "/orders/+8" are
        # order 8, one lock, as "/orders/8" is.
        endpoint = request.scope.get("endpoint")
        for field in template.fields:
            if field in values:
                if (endpoint, field) not in typed:
                    typed[endpoint, field] = _converter(endpoint, field)
                values[field] = _as_declared(typed[endpoint, field], values[field])
        try:
            lock_name = template.render(values)
        except KeyError as exc:
            raise HTTPException(
                422,
                f"the lock name {template.template!r} needs {exc.args[0]!r}, a path or "
                "query parameter this request does not have",
            ) from None
        try:
            validate_name(lock_name)
        except ConfigurationError as exc:  # too long, or reserved: made so by the request
            raise HTTPException(422, str(exc)) from None
        rl = redlock if redlock is not None else get_redlock(request)
        lock = rl.lock(lock_name, ttl=ttl, timeout=timeout, blocking=True, **_lease(max_hold))
        # An async handler is cancelled when the lease is lost (``async with``). A sync
        # one runs in a worker thread that nothing can stop: it is not cancelled (the
        # client would be answered while the thread goes on); its lock.check() raises.
        # A loss found only at the end is logged by the release: the response may be
        # sent already (the default scope), too late to change it.
        cancellable = endpoint is None or is_async_callable(endpoint)
        acquired = returned = False
        try:
            if cancellable:
                async with lock:
                    acquired = True
                    yield lock
                    returned = True  # (an exception of the handler's comes in at yield)
            else:
                if not await lock.acquire(blocking=True, timeout=timeout):
                    raise LockNotAcquired(f"lock {shown(lock_name)} is taken", name=lock_name)
                acquired = True
                try:
                    yield lock
                finally:
                    await lock.release()
        except QuorumUnavailable as exc:
            if acquired:
                raise  # the handler's own, from another lock
            raise HTTPException(
                503, f"lock {shown(lock_name)}: too few servers usable; {exc}"
            ) from None
        except LockNotAcquired:
            if acquired:
                raise
            raise HTTPException(
                status_code, f"lock {shown(lock_name)} is held by another request"
            ) from None
        except LockLost as exc:
            if exc.name != lock_name:
                raise
            if returned:
                # A handler that never awaited while its lease ran out: the loss is found
                # as the block ends, after its response was made (and perhaps sent).
                logger.warning(
                    "%s; the response of the request stands (call lock.check() before a "
                    "write that must happen under the lock)",
                    exc,
                )
                return
            raise HTTPException(lost_status_code, str(exc)) from exc

    hold.__name__ = f"locked_{'_'.join(template.fields) or 'name'}"
    hold.__qualname__ = hold.__name__
    return hold


def _converter(endpoint: object, field: str) -> Callable[[object], object] | None:
    """How FastAPI turns the request's text for ``field`` into the value the handler
    ``endpoint`` declares (pydantic, in its lax mode, as FastAPI validates parameters);
    None where there is nothing to convert: no such parameter, no type, ``str``, or no
    pydantic (Starlette alone: its path convertors, ``{order_id:int}``, type the path
    parameters already)."""
    if not callable(endpoint):
        return None
    try:
        declared = typing.get_type_hints(endpoint, include_extras=True).get(field)
    except Exception:  # an annotation that does not resolve here: FastAPI's own matter
        return None
    if declared is None or declared is str:
        return None
    try:
        from pydantic import TypeAdapter  # noqa: PLC0415 (FastAPI's; Starlette has none)
    except ImportError:
        return None
    try:
        return cast(Callable[[object], object], TypeAdapter(declared).validate_python)
    except Exception:  # a type pydantic cannot validate: the text, as FastAPI gets it
        return None


def _as_declared(convert: Callable[[object], object] | None, text: object) -> object:
    """``text`` as the handler's declared type, for the lock name; the text itself where
    it does not convert (FastAPI answers such a request 422)."""
    if convert is None:
        return text
    try:
        value = convert(text)
    except Exception:
        return text
    return value.value if isinstance(value, enum.Enum) else value


def _lease(max_hold: Duration | None) -> dict[str, Any]:
    if max_hold is None:
        return {}
    return {"auto_extend": True, "max_hold": max_hold}
