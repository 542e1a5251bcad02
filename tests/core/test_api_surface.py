"""The sync and asyncio APIs stay the same: the same names, parameters and defaults.

``quorumlock.asyncio`` promises "the same names and semantics as the sync API, with
awaits". Every difference between the two surfaces is listed here, on purpose: the
methods that are coroutines in asyncio, the context-manager protocol, and the type of
``Lock.lost``. A method, parameter or default added to one API and not the other fails
this test. No server is needed: nothing here makes a network call.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import typing
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio

import quorumlock
import quorumlock.asyncio
import quorumlock.testing
from tests.conftest import strict_mypy

#: The names both modules export (the rest of ``quorumlock``'s exports, exceptions and
#: events among them, are shared by the asyncio API: it imports them from there).
TWINS = (
    "Campaign",
    "Election",
    "Lock",
    "MultiLock",
    "Permit",
    "RLock",
    "ReadWriteHold",
    "ReadWriteLock",
    "RedisFence",
    "Redlock",
)

#: Allowed difference 1: these are ``async def`` in the asyncio API, plain in the sync one.
COROUTINES = {
    "Redlock": {"close"},
    "Lock": {"acquire", "release", "extend", "export", "locked", "owned"},
    "RLock": {"acquire", "release", "extend", "export", "locked", "owned"},
    "MultiLock": {"acquire", "release", "extend", "export", "locked", "owned"},
    "ReadWriteHold": {"acquire", "release", "extend", "export", "locked", "owned", "downgrade"},
    "ReadWriteLock": set(),
    "Permit": {"acquire", "release", "extend", "export", "locked", "owned"},
    "RedisFence": {"execute", "highest"},
    "Election": {"leader"},
    "Campaign": set(),
}

#: Allowed difference 2: ``with`` in the sync API, ``async with`` in the asyncio one.
SYNC_ONLY = {"__enter__", "__exit__"}
ASYNC_ONLY = {"__aenter__", "__aexit__"}

#: Allowed difference 3: the types of these instance attributes.
ATTRIBUTE_TYPES = {
    ("Lock", "lost"): (threading.Event, asyncio.Event),
    ("RLock", "lost"): (threading.Event, asyncio.Event),
    ("MultiLock", "lost"): (threading.Event, asyncio.Event),
    ("ReadWriteHold", "lost"): (threading.Event, asyncio.Event),
    ("Permit", "lost"): (threading.Event, asyncio.Event),
}

URL = "redis://127.0.0.1:1"  # never contacted


def members(cls: type) -> set[str]:
    """The public members of ``cls``, with the protocol methods that matter here."""
    shown = {"__init__"} | SYNC_ONLY | ASYNC_ONLY
    return {n for n in dir(cls) if not n.startswith("_") or n in shown}


def signature_of(func: Any) -> list[tuple[str, str, object, object]]:
    """(name, kind, default, annotation) of each parameter; annotations are strings
    (``from __future__ import annotations``), the same text in both APIs."""
    return [
        (p.name, p.kind.name, p.default, p.annotation)
        for p in inspect.signature(func).parameters.values()
    ]


def test_both_modules_export_the_same_twins() -> None:
    assert set(quorumlock.asyncio.__all__) == set(TWINS)
    assert set(TWINS) <= set(quorumlock.__all__)


@pytest.mark.parametrize("name", TWINS)
def test_the_twins_have_the_same_members_and_signatures(name: str) -> None:
    sync_cls = getattr(quorumlock, name)
    async_cls = getattr(quorumlock.asyncio, name)
    sync_members, async_members = members(sync_cls), members(async_cls)
    assert sync_members - async_members == SYNC_ONLY & sync_members
    assert async_members - sync_members == ASYNC_ONLY & async_members
    for member in sorted(sync_members & async_members):
        sync_value = inspect.getattr_static(sync_cls, member)
        async_value = inspect.getattr_static(async_cls, member)
        assert type(sync_value) is type(async_value), member  # property, function...
        if isinstance(sync_value, property):
            continue
        where = f"{name}.{member}"
        assert signature_of(sync_value)[1:] == signature_of(async_value)[1:], where
        assert not inspect.iscoroutinefunction(sync_value), where
        is_coroutine = inspect.iscoroutinefunction(async_value)
        assert is_coroutine == (member in COROUTINES[name]), where


@pytest.mark.parametrize("module", [quorumlock, quorumlock.asyncio], ids=["sync", "async"])
@pytest.mark.parametrize("name", TWINS)
def test_a_wrong_call_names_the_public_class(module: Any, name: str) -> None:
    """Python's own TypeError for a wrong call (a missing argument, say) names a method
    by its ``__qualname__``: every public method names a class the user can see (it said
    ``RedlockBase.rwlock()``, ``Family.rlock()``, ``ReadWriteLockBase.read()``)."""
    cls = getattr(module, name)
    for member in sorted(members(cls) - {"__init__"} - SYNC_ONLY - ASYNC_ONLY):
        value = inspect.getattr_static(cls, member)
        if inspect.isfunction(value):
            owner = value.__qualname__.rsplit(".", 1)[0]
            assert owner in TWINS, f"{name}.{member} is shown as {value.__qualname__}"
    rl = module.Redlock([URL])
    with pytest.raises(TypeError, match=r"^Redlock\.rwlock\(\) missing 1 required"):
        rl.rwlock()
    with pytest.raises(TypeError, match=r"^ReadWriteLock\.read\(\) takes 1 positional"):
        rl.rwlock("r", ttl=5).read(1)


def test_the_context_managers_take_the_same_arguments() -> None:
    for name in ("Campaign", "Lock", "RLock", "MultiLock", "Permit", "Redlock"):
        sync_cls = getattr(quorumlock, name)
        async_cls = getattr(quorumlock.asyncio, name)
        assert signature_of(sync_cls.__exit__) == signature_of(async_cls.__aexit__), name
        assert inspect.iscoroutinefunction(async_cls.__aenter__)
        assert inspect.iscoroutinefunction(async_cls.__aexit__)


def async_instances() -> dict[str, Any]:
    """One instance of each asyncio twin, made without a network call."""

    async def build() -> dict[str, Any]:
        async_rl = quorumlock.asyncio.Redlock([URL])
        async_client = redis.asyncio.Redis(host="127.0.0.1", port=1)
        made = {
            "Redlock": async_rl,
            "Lock": async_rl.lock("surface", ttl=1),
            "RLock": async_rl.rlock("surface", ttl=1),
            "MultiLock": async_rl.lock_many(["surface", "surface:2"], ttl=1),
            "ReadWriteLock": async_rl.rwlock("surface", ttl=1),
            "ReadWriteHold": async_rl.rwlock("surface", ttl=1).write(),
            "Permit": async_rl.semaphore("surface", permits=2, ttl=1),
            "RedisFence": quorumlock.asyncio.RedisFence(async_client, "surface"),
            "Election": async_rl.election("surface", ttl=1, identity="i"),
            "Campaign": async_rl.election("surface", ttl=1, identity="i").campaign(),
        }
        await async_client.aclose()
        return made

    return asyncio.run(build())


def sync_instances() -> dict[str, Any]:
    """One instance of each sync twin, made without a network call."""
    sync_rl = quorumlock.Redlock([URL])
    sync_client = redis.Redis(host="127.0.0.1", port=1)
    made = {
        "Redlock": sync_rl,
        "Lock": sync_rl.lock("surface", ttl=1),
        "RLock": sync_rl.rlock("surface", ttl=1),
        "MultiLock": sync_rl.lock_many(["surface", "surface:2"], ttl=1),
        "ReadWriteLock": sync_rl.rwlock("surface", ttl=1),
        "ReadWriteHold": sync_rl.rwlock("surface", ttl=1).write(),
        "Permit": sync_rl.semaphore("surface", permits=2, ttl=1),
        "RedisFence": quorumlock.RedisFence(sync_client, "surface"),
        "Election": sync_rl.election("surface", ttl=1, identity="i"),
        "Campaign": sync_rl.election("surface", ttl=1, identity="i").campaign(),
    }
    sync_client.close()
    return made


def test_instances_have_the_same_public_attributes() -> None:
    sync_made = sync_instances()
    async_made = async_instances()
    for name in TWINS:
        sync_attrs = {k: v for k, v in vars(sync_made[name]).items() if not k.startswith("_")}
        async_attrs = {k: v for k, v in vars(async_made[name]).items() if not k.startswith("_")}
        assert sync_attrs.keys() == async_attrs.keys(), name
        for attr, sync_value in sync_attrs.items():
            expected = ATTRIBUTE_TYPES.get((name, attr), (type(sync_value),) * 2)
            assert (type(sync_value), type(async_attrs[attr])) == expected, f"{name}.{attr}"


def test_every_twin_has_a_repr_naming_its_api_kind_and_name() -> None:
    """A repr a person can read in a log or a debugger: the API (``quorumlock`` or
    ``quorumlock.asyncio``), the kind, and the name it is about (the default
    ``<... object at 0x...>`` said neither for a fence or a campaign)."""
    for api, made in (("quorumlock", sync_instances()), ("quorumlock.asyncio", async_instances())):
        for name in TWINS:
            text = repr(made[name])
            assert text.startswith((f"<{api}.{name} ", f"{api}.{name}(")), text
            assert "surface" in text or "127.0.0.1" in text, text


def test_the_docs_draw_the_whole_exception_tree() -> None:
    """Catches docs/algorithm.md's tree of exceptions leaving some out (it had neither
    StaleFencingToken nor FenceError): every exception quorumlock exports is drawn, under
    the parent it has."""
    page = (Path(__file__).resolve().parents[2] / "docs" / "algorithm.md").read_text()
    tree = page.split("```\nQuorumLockError\n", 1)[1].split("```", 1)[0]
    drawn: dict[str, str] = {}
    parents = ["QuorumLockError"]
    for line in tree.splitlines():
        name = line.lstrip("│├└─ ").split()[0]
        depth = (len(line) - len(line.lstrip("│├└─ "))) // 4
        del parents[depth:]
        drawn[name] = parents[-1]
        parents.append(name)
    exported = {
        name: getattr(quorumlock, name)
        for name in quorumlock.__all__
        if isinstance(getattr(quorumlock, name), type)
        and issubclass(getattr(quorumlock, name), quorumlock.QuorumLockError)
        and name != "QuorumLockError"
    }
    assert set(drawn) == set(exported)
    for name, cls in exported.items():
        assert issubclass(cls, getattr(quorumlock, drawn[name])), name


def test_the_redlock_docstring_gives_every_option_with_its_default() -> None:
    """``help(quorumlock.Redlock)`` lists the keyword-only options as the signature has
    them, ``name=default``: an option added to the signature and not to the docstring
    fails here."""
    doc = quorumlock.Redlock.__doc__ or ""
    options = [
        p
        for p in inspect.signature(quorumlock.Redlock).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    assert options
    missing = [
        f"{p.name}={p.default!r}" for p in options if f"``{p.name}={p.default!r}``" not in doc
    ]
    assert not missing


def test_every_public_member_has_a_docstring() -> None:
    """``help()`` on any class that ``quorumlock``, ``quorumlock.asyncio`` or
    ``quorumlock.testing`` exports says what each of its public methods and properties
    is (``help(lock)`` showed ``name`` with nothing to say, for one)."""
    undocumented = []
    for module in (quorumlock, quorumlock.asyncio, quorumlock.testing):
        for export in module.__all__:
            cls = getattr(module, export)
            if not inspect.isclass(cls):
                continue
            for member in dir(cls):
                if member.startswith("_") or member in getattr(object, "__dict__", {}):
                    continue
                value = inspect.getattr_static(cls, member)
                if isinstance(value, property):
                    value = value.fget
                elif isinstance(value, classmethod | staticmethod):
                    value = value.__func__
                if not callable(value):
                    continue  # a field or a constant: documented by its class
                if not (getattr(value, "__doc__", None) or "").strip():
                    undocumented.append(f"{module.__name__}.{export}.{member}")
    assert not undocumented


def test_the_annotations_of_the_public_api_resolve() -> None:
    """``typing.get_type_hints`` works on every public function and method, as the
    frameworks that read annotations at run time (FastAPI, pydantic, Sphinx) call it: a
    name imported for type checkers only made it raise NameError (the lock errors'
    ``NodeOutcome``)."""
    failures = []
    for module in (quorumlock, quorumlock.asyncio, quorumlock.testing):
        for export in module.__all__:
            value = getattr(module, export)
            if inspect.isclass(value):
                functions = [
                    (f"{export}.{name}", member.fget if isinstance(member, property) else member)
                    for cls in value.__mro__
                    if cls.__module__.startswith("quorumlock")
                    for name, member in vars(cls).items()
                    if (not name.startswith("_") or name in {"__init__", "__enter__", "__aenter__"})
                    and (callable(member) or isinstance(member, property))
                ]
            elif callable(value):
                functions = [(export, value)]
            else:
                continue
            for where, function in functions:
                try:
                    typing.get_type_hints(function)
                except NameError as exc:
                    failures.append(f"{module.__name__}.{where}: {exc}")
    assert not failures


# --------------------------------------------------------------------------------------
# The public API as a type checker sees it: ``typed_usage.py`` is user code whose types
# ``mypy --strict`` must accept as they are stated there.
# --------------------------------------------------------------------------------------

USAGE = Path(__file__).with_name("typed_usage.py")


@pytest.mark.usefixtures("have_mypy")
def test_typed_user_code_gets_the_stated_types(tmp_path: Path) -> None:
    """Every ``assert_type`` and ``type: ignore`` of the usage file holds; the same file
    with one stated type wrong fails, or the check proves nothing."""
    checked = strict_mypy(USAGE)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    source = USAGE.read_text()
    wrong = source.replace("assert_type(permit.slot, int | None)", "assert_type(permit.slot, str)")
    assert wrong != source
    broken = tmp_path / "typed_usage.py"
    broken.write_text(wrong)
    failed = strict_mypy(broken)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "[assert-type]" in failed.stdout
