"""Releases that may still reach a server after the next attempt of the same acquire.

A blocking acquire tries again with the same token, and the undo of a failed attempt is
a compare-and-delete of that token (R6 step 5). On one connection the server runs them
in the order they were sent. A connection closed before a release's reply came (given
up as frozen, broken, or one that cannot owe replies) takes nothing back: the release
may be on its way in the network, or unread in the server's buffer, and run there after
the next attempt, sent on a new connection, has been granted. It would then delete the
grant the acquire counted toward its majority: the lock held, as far as its holder
knows, on a server that has let it go, where another client can take it
(``docs/algorithm.md``, "N servers", "An undo that comes late").

So a server keeps the tokens of the releases cut off that way (:class:`Orphans`), and an
acquire of one of those tokens is not sent there any more: that server counts as
failed for it (:func:`withheld`). Releases, extensions and other tokens are sent as
before.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import Protocol

from quorumlock._algorithm.flows import RELEASE_OPS, Fanout

__all__ = ["ORPHANS_MOST", "Orphans", "withheld"]

#: At most this many tokens are kept per server; the oldest goes first (an acquire that
#: old has long stopped trying).
ORPHANS_MOST = 16384


class Orphans:
    """The tokens of releases cut off on their way to one server (see the module)."""

    __slots__ = ("_lock", "_most", "tokens")

    def __init__(self, most: int = ORPHANS_MOST) -> None:
        # (read without the lock: every round of an acquire looks, nearly always at an
        # empty one)
        self.tokens: OrderedDict[str, None] = OrderedDict()
        self._most = most
        self._lock = threading.Lock()

    def __contains__(self, token: str) -> bool:
        return token in self.tokens

    def add(self, steps: Iterable[Fanout]) -> None:
        """Those of ``steps`` (commands whose replies will not be read) that release."""
        tokens = [step.token for step in steps if step.op in RELEASE_OPS]
        if not tokens:
            return
        with self._lock:
            for token in tokens:
                self.tokens[token] = None
                self.tokens.move_to_end(token)
            while True:  # (not ``while <test>:``: see tests/core/test_loops_in_handlers.py)
                if len(self.tokens) <= self._most:
                    break
                self.tokens.popitem(last=False)


class _HasOrphans(Protocol):
    @property
    def orphans(self) -> Orphans | None: ...


def withheld(step: Fanout, nodes: Sequence[_HasOrphans]) -> frozenset[int]:
    """The servers ``step`` must not be sent to: an acquire whose token has a release
    cut off on its way there."""
    if not step.acquires:
        return _NONE
    token = step.token
    found = _NONE
    for i, node in enumerate(nodes):
        orphans = node.orphans
        if orphans is not None and orphans.tokens and token in orphans.tokens:
            found = found | {i}
    return found


_NONE: frozenset[int] = frozenset()
