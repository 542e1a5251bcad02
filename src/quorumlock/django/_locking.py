"""``@locked`` for views and functions, and :class:`LockedViewMixin` for class-based views."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any, ClassVar, ParamSpec, TypeVar

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.views import View

from quorumlock._algorithm.config import Duration, LockOptions, RedlockConfig, shown, validate_name
from quorumlock._exceptions import ConfigurationError, LockLost, LockNotAcquired, QuorumUnavailable
from quorumlock._integration import NameTemplate
from quorumlock._sync import Lock
from quorumlock.django._redlock import get_redlock

__all__ = ["LockedViewMixin", "locked"]

P = ParamSpec("P")
R = TypeVar("R")


class _Policy:
    """A lock template and what to do around it, checked once (at decoration)."""

    def __init__(
        self,
        name: str,
        *,
        ttl: Duration,
        timeout: Duration | None,
        max_hold: Duration | None,
        status_code: int,
        lost_status_code: int,
    ) -> None:
        self.template = NameTemplate(name)
        if not (isinstance(status_code, int) and 400 <= status_code <= 599):
            raise ConfigurationError(
                f"status_code must be a 4xx or 5xx status (409 or 423, say), not {status_code!r}"
            )
        if not (isinstance(lost_status_code, int) and 500 <= lost_status_code <= 599):
            raise ConfigurationError(
                f"lost_status_code must be a 5xx status, not {lost_status_code!r}"
            )
        # The checks of rl.lock(), made now on a stand-in name; the ttl is checked against
        # the Redlock's max_ttl at the first call (the Redlock is built lazily).
        LockOptions.build(
            RedlockConfig(max_ttl=None),
            "quorumlock-check",
            ttl=ttl,
            timeout=timeout,
            blocking=True,
            auto_extend=max_hold is not None,
            max_extensions=None,
            max_hold=max_hold,
            on_lost=None,
        )
        self.ttl = ttl
        self.timeout = timeout
        self.max_hold = max_hold
        self.status_code = status_code
        self.lost_status_code = lost_status_code

    def lock(self, values: Mapping[str, object]) -> Lock:
        """The lock for these values (raises KeyError naming a missing field)."""
        name = self.template.render(values)
        lease: dict[str, Any] = {}
        if self.max_hold is not None:
            lease = {"auto_extend": True, "max_hold": self.max_hold}
        return get_redlock().lock(name, ttl=self.ttl, timeout=self.timeout, **lease)

    def run(
        self,
        values: Mapping[str, object],
        request: HttpRequest | None,
        call: Callable[[Lock], R],
    ) -> R | HttpResponse:
        """``call(lock)`` under the lock. For a view (``request`` given) a taken lock, too
        few servers, a missing parameter or a lost lease are answered with a response;
        for a plain function they raise."""
        try:
            lock = self.lock(values)
        except KeyError as exc:
            if request is None:
                raise ConfigurationError(
                    f"the lock name {self.template.template!r} needs {exc.args[0]!r}, which "
                    "is not an argument of this call"
                ) from None
            return _answer(
                400,
                f"the lock name {self.template.template!r} needs {exc.args[0]!r}, a URL or "
                "query parameter this request does not have",
            )
        except ConfigurationError:
            if request is None or not _name_error(self.template, values):
                raise
            return _answer(400, "the lock name made from this request is not valid")
        acquired = returned = False
        try:
            with lock:
                acquired = True
                result = call(lock)
                returned = True
        except QuorumUnavailable as exc:
            if acquired or request is None:
                raise
            return _answer(503, f"lock {shown(lock.name)}: too few servers usable; {exc}")
        except LockNotAcquired:
            if acquired or request is None:
                raise
            return _answer(self.status_code, f"lock {shown(lock.name)} is held by another request")
        except LockLost as exc:
            # Ours, from the end of the block or from the view's own lock.check(); a
            # LockLost of another lock the view holds is the view's error.
            if request is None or (not returned and exc.name != lock.name):
                raise
            return _answer(self.lost_status_code, str(exc))
        return result


def _name_error(template: NameTemplate, values: Mapping[str, object]) -> bool:
    try:
        validate_name(template.render(values))
    except ConfigurationError:
        return True
    return False


def _answer(status: int, message: str) -> HttpResponse:
    return HttpResponse(message + "\n", status=status, content_type="text/plain; charset=utf-8")


def _request_values(request: HttpRequest) -> dict[str, object]:
    return {key: request.GET[key] for key in request.GET}


def locked(
    name: str,
    *,
    ttl: Duration,
    timeout: Duration | None = 0.0,
    max_hold: Duration | None = None,
    status_code: int = 409,
    lost_status_code: int = 503,
) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Run every call of a view or a function under the lock ``name``.

    ``name`` is a template over the function's arguments by name (``"invoice:{pk}"``
    for ``def view(request, pk)``), and for a view also over the query string
    (``request.GET``). ``timeout`` is how long a call waits for the lock (0, the
    default: one attempt; None: no limit); ``ttl`` the lease; ``max_hold`` renews it
    while the call runs, up to that many seconds (``math.inf``: no limit).

    For a view (the first argument is an ``HttpRequest``): a lock that stays taken is
    answered ``status_code`` (409 Conflict; 423 Locked if you prefer), too few servers
    503, a lost lease ``lost_status_code`` (503; the view ran to its end: a thread
    cannot be interrupted, so call ``lock.check()`` where it matters, see
    :class:`LockedViewMixin`), a missing parameter 400. For any other function they
    raise :class:`LockNotAcquired`, :class:`QuorumUnavailable`, :class:`LockLost` and
    :class:`ConfigurationError`, as ``with lock:`` would.

    ``async def`` functions are refused (``TypeError``): the lock is taken with the
    sync API. Options are checked here: ``TypeError`` or :class:`ConfigurationError`.
    """
    policy = _Policy(
        name,
        ttl=ttl,
        timeout=timeout,
        max_hold=max_hold,
        status_code=status_code,
        lost_status_code=lost_status_code,
    )

    def decorate(func: Callable[P, R]) -> Callable[P, R]:
        if inspect.iscoroutinefunction(func):
            raise TypeError(
                f"{func!r} is an async function: quorumlock.django.locked takes the lock "
                "with the sync API; in async code use quorumlock.asyncio.Redlock"
            )
        signature = inspect.signature(func)

        @functools.wraps(func)
        def call(*args: P.args, **kwargs: P.kwargs) -> R:
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            values: dict[str, object] = {}
            request = args[0] if args and isinstance(args[0], HttpRequest) else None
            if request is not None:
                values.update(_request_values(request))
            for key, value in bound.arguments.items():
                kind = signature.parameters[key].kind
                if kind is inspect.Parameter.VAR_KEYWORD:
                    values.update(value)
                elif kind is not inspect.Parameter.VAR_POSITIONAL:
                    values[key] = value
            # A view's own responses and ours are both HttpResponses (R, for a view).
            result: Any = policy.run(values, request, lambda lock: func(*args, **kwargs))
            return result  # type: ignore[no-any-return]

        return call

    return decorate


class LockedViewMixin(View):
    """A class-based view that handles each request under a lock.

    ::

        class PayInvoice(LockedViewMixin, View):
            lock_name = "invoice:{pk}"   # over the URL's kwargs, then the query string
            lock_ttl = 30
            lock_timeout = 5

            def post(self, request, pk):
                self.lock.check()        # LockLost if the lease ran out
                ...

    The attributes are those of :func:`locked` with a ``lock_`` prefix; ``lock_methods``
    limits the lock to some HTTP methods (``{"post"}``; default: all). While a request
    is handled, ``self.lock`` is the held :class:`quorumlock.Lock`.
    """

    lock_name: ClassVar[str]
    lock_ttl: ClassVar[Duration] = 30.0
    lock_timeout: ClassVar[Duration | None] = 0.0
    lock_max_hold: ClassVar[Duration | None] = None
    lock_status_code: ClassVar[int] = 409
    lock_lost_status_code: ClassVar[int] = 503
    lock_methods: ClassVar[Collection[str] | None] = None
    _lock_policy: ClassVar[_Policy | None] = None
    lock: Lock

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if getattr(cls, "lock_name", None) is None:
            cls._lock_policy = None  # an abstract base: a subclass names the lock
            return
        cls._lock_policy = _Policy(
            cls.lock_name,
            ttl=cls.lock_ttl,
            timeout=cls.lock_timeout,
            max_hold=cls.lock_max_hold,
            status_code=cls.lock_status_code,
            lost_status_code=cls.lock_lost_status_code,
        )
        if cls.lock_methods is not None:
            cls.lock_methods = _methods(cls.lock_methods, getattr(cls, "http_method_names", None))

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        policy = type(self)._lock_policy
        if policy is None:
            raise ConfigurationError(f"{type(self).__name__} sets no lock_name")
        methods = self.lock_methods
        method = (request.method or "").lower()
        if methods is not None and method not in methods:
            return super().dispatch(request, *args, **kwargs)
        values = {**_request_values(request), **kwargs}

        def handle(lock: Lock) -> HttpResponseBase:
            self.lock = lock
            return super(LockedViewMixin, self).dispatch(request, *args, **kwargs)

        return policy.run(values, request, handle)


def _methods(given: object, known: Collection[str] | None) -> frozenset[str]:
    """``lock_methods`` as lower-case names, checked: a str would be taken letter by
    letter (``"post"``: the methods p, o, s, t, and the lock never taken)."""
    if isinstance(given, str | bytes) or not isinstance(given, Collection):
        raise TypeError(
            f"lock_methods must be a collection of HTTP method names, such as "
            f"{{'post'}}, not {given!r}"
        )
    methods = frozenset(m.lower() if isinstance(m, str) else m for m in given)
    for method in methods:
        if not isinstance(method, str):
            raise TypeError(f"lock_methods holds {method!r}, not an HTTP method name")
        if known is not None and method not in known:
            raise ConfigurationError(
                f"lock_methods names {method!r}, which the view does not handle "
                f"(http_method_names: {', '.join(sorted(known))})"
            )
    return methods
