"""The exceptions, as a caller that ships them elsewhere meets them: each one pickles
whole (its fields, the notes added to it, its own class, a subclass's too) and is rebuilt
from ``args`` alone, as a JSON result backend does."""

from __future__ import annotations

import pickle

import pytest

from quorumlock import (
    ConfigurationError,
    FenceError,
    LockLost,
    LockNotAcquired,
    LockNotHeld,
    LockNotReentrant,
    LockUpgradeRefused,
    NodeOutcome,
    QuorumLockError,
    QuorumUnavailable,
    Reply,
    StaleFencingToken,
)

OUTCOMES = (NodeOutcome("redis://127.0.0.1:7001/0", Reply.TIMEOUT),)


class AppLost(LockLost):
    """An application's own subclass."""


class AppStale(StaleFencingToken):
    """An application's own subclass."""


class AppFence(FenceError):
    """An application's own subclass."""


ERRORS: list[QuorumLockError] = [
    ConfigurationError("bad"),
    LockNotAcquired("taken", name="orders:42", outcomes=OUTCOMES),
    QuorumUnavailable("too few", name="orders:42", outcomes=OUTCOMES),
    LockLost("lost", name="orders:42", outcomes=OUTCOMES),
    LockNotHeld("not held", name="orders:42"),
    LockNotReentrant("again", name="orders:42"),
    LockUpgradeRefused("no upgrade", name="orders:42"),
    StaleFencingToken("stale", token=3, highest=5),
    FenceError("failed", resource="stock:42"),
    AppLost("lost", name="orders:42", outcomes=OUTCOMES),
    AppStale("stale", token=3, highest=5),
    AppFence("failed", resource="stock:42"),
]


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_an_error_pickles_with_its_class_fields_and_notes(error: QuorumLockError) -> None:
    error.add_note("while paying invoice 7")
    copy = pickle.loads(pickle.dumps(error))
    assert type(copy) is type(error)
    assert (str(copy), copy.args) == (str(error), error.args)
    assert copy.__notes__ == ["while paying invoice 7"]
    fields = ("name", "outcomes", "token", "highest", "resource")
    assert {f: getattr(copy, f, None) for f in fields} == {
        f: getattr(error, f, None) for f in fields
    }


@pytest.mark.parametrize("error", ERRORS, ids=lambda e: type(e).__name__)
def test_an_error_is_rebuilt_from_its_args(error: QuorumLockError) -> None:
    rebuilt = type(error)(*error.args)
    assert (type(rebuilt), str(rebuilt), rebuilt.args) == (type(error), str(error), error.args)
