"""The sync and asyncio APIs present the same surface: the same public names on
``Redlock``, ``Lock`` and ``RedisFence``, and the same parameters (names, kinds, defaults,
annotations) on every method. What may differ is listed here, explicitly."""

from __future__ import annotations

import inspect

import pytest

import quorumlock
import quorumlock.asyncio

CLASSES = sorted(quorumlock.asyncio.__all__)

#: (class, attribute): why the two flavours may differ there. Return annotations differ
#: everywhere a method is a coroutine in the asyncio API, so they are not compared.
ALLOWED: dict[tuple[str, str], str] = {}

#: Parameter annotations that name a client of the flavour: the asyncio API takes the
#: asyncio client where the sync API takes the sync one.
CLIENT_TYPES = {"redis.asyncio.Redis": "redis.Redis"}


def _public(cls: type) -> dict[str, object]:
    return {name: getattr(cls, name) for name in dir(cls) if not name.startswith("_")}


def _parameters(function: object) -> list[tuple[str, object, object, object]]:
    signature = inspect.signature(function)  # type: ignore[arg-type]
    return [
        (p.name, p.kind, p.default, CLIENT_TYPES.get(str(p.annotation), p.annotation))
        for p in signature.parameters.values()
    ]


def test_the_asyncio_module_offers_the_sync_names() -> None:
    assert quorumlock.asyncio.__all__ == sorted(quorumlock.asyncio.__all__)
    assert set(quorumlock.asyncio.__all__) <= set(quorumlock.__all__)
    assert CLASSES == ["Lock", "RedisFence", "Redlock"]


@pytest.mark.parametrize("name", CLASSES)
def test_the_same_names_with_the_same_parameters(name: str) -> None:
    sync_cls = getattr(quorumlock, name)
    async_cls = getattr(quorumlock.asyncio, name)
    sync_names, async_names = _public(sync_cls), _public(async_cls)
    assert sorted(sync_names) == sorted(async_names)
    assert _parameters(sync_cls.__init__) == _parameters(async_cls.__init__)
    for attr, sync_value in sync_names.items():
        if (name, attr) in ALLOWED:
            continue
        async_value = async_names[attr]
        assert callable(sync_value) == callable(async_value), attr
        assert isinstance(sync_value, property) == isinstance(async_value, property), attr
        if callable(sync_value) and not isinstance(sync_value, type):
            assert _parameters(sync_value) == _parameters(async_value), f"{name}.{attr}"


def test_coroutines_where_the_sync_api_blocks() -> None:
    """Every method that talks to the servers is a coroutine in the asyncio API."""
    for name, methods in {
        "Redlock": ["close"],
        "Lock": ["acquire", "extend", "release"],
    }.items():
        cls = getattr(quorumlock.asyncio, name)
        for method in methods:
            assert inspect.iscoroutinefunction(getattr(cls, method)), f"{name}.{method}"
            assert not inspect.iscoroutinefunction(getattr(getattr(quorumlock, name), method))
