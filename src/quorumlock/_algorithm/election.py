"""Leader election on top of the lock: the term record, and who leads by a majority.

Pure. An election on ``name`` is the lock ``name`` (the key on every server) taken with
fencing on and renewed while the leader's block runs; the leader's *term* is the
fencing token of its acquisition, so terms strictly increase across leaders (see
``fencing.py``), and a resource guarded by ``RedisFence`` refuses a deposed leader's
writes. What the lock alone does not give is ``leader()``: anyone may ask who leads. So
the holder's token carries its identity (``<40 hex digits>:<identity>``), and once it
holds the lock the leader writes its term next to the key, in the term record
(:func:`term_key`): ``"<term> <token>"``, on every server that still holds its token
(:data:`~quorumlock._algorithm.scripts.CLAIM_TERM`). The record has no ttl: it is
overwritten by the next leader's, never lowered, and counts only while the key holds
the token it names.

``leader()`` reads, on every server, the key's value, its remaining time to live and
the record (:data:`~quorumlock._algorithm.scripts.READ_LEADER`), and reports a leader
only when a majority agree on the same token and term. Its validity is counted as for
an acquire (R6) from the round's start, with the smallest time to live among the
majority of longest ones: at least a majority keeps the key until then, so no other
candidate can lead before (docs/election.md).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import NamedTuple

from quorumlock._algorithm.arithmetic import deadline, quorum
from quorumlock._algorithm.config import RedlockConfig, shown
from quorumlock._algorithm.flows import Fanout, Flow, Op, Round
from quorumlock._algorithm.outcomes import NodeOutcome, Reply, render_outcomes
from quorumlock._exceptions import ConfigurationError, QuorumUnavailable

__all__ = [
    "MAX_IDENTITY_BYTES",
    "TERM_PREFIX",
    "Leader",
    "check_election_name",
    "check_identity",
    "claim_flow",
    "election_token",
    "identity_of",
    "leader_flow",
    "leader_of",
    "term_key",
]

#: The term record of election ``name`` is kept under this prefix (see :func:`term_key`).
TERM_PREFIX = "quorumlock:term:"

#: The longest identity, in bytes of UTF-8: it is stored in the key's value on every server.
MAX_IDENTITY_BYTES = 1024


class Leader(NamedTuple):
    """Who leads an election, read from a majority of the servers (``leader()``).

    ``identity``: what the leader gave to ``Redlock.election()``; ``term``: its term
    number (the fencing token of its acquisition); ``validity``: seconds it leads at
    least, counted from before the read was sent, drift allowed for.
    """

    identity: str
    term: int
    validity: float


def _tag_end(name: str) -> int:
    """Where the hash tag of ``name`` ends (the index of its ``}``), or -1 without one."""
    start = name.find("{")
    if start < 0:
        return -1
    end = name.find("}", start + 1)
    return end if end > start + 1 else -1


def term_key(name: str) -> str:
    """The term record of election ``name``: in the same cluster hash slot as ``name``,
    and another key for every name.

    Any name without a hash tag becomes the record's tag (``quorumlock:term:{jobs}``),
    which hashes as the whole name does, provided it has no ``}``
    (:func:`check_election_name` refuses those). A name with a hash tag keeps it, after
    ``tagged:`` (``quorumlock:term:tagged:{jobs}``: no brace before the name's, so its
    tag is the record's): without that word, election ``{jobs}`` would share the record
    of election ``jobs``.
    """
    if _tag_end(name) >= 0:
        return f"{TERM_PREFIX}tagged:{name}"
    return f"{TERM_PREFIX}{{{name}}}"


def check_election_name(name: str) -> str:
    """An election name (already a valid lock name) whose term record can share its
    cluster slot: a ``}`` is only allowed after a hash tag (``{...}``)."""
    if "}" in name and _tag_end(name) < 0:
        raise ConfigurationError(
            f"election name {shown(name)} has a '}}' but no hash tag: its term record could "
            "not share its cluster slot; drop the '}' or give the name a tag such as '{x}'"
        )
    return name


def check_identity(identity: object) -> str:
    """A leader's identity: a non-empty ``str`` of at most :data:`MAX_IDENTITY_BYTES`
    bytes of UTF-8, without NUL."""
    if not isinstance(identity, str):
        raise TypeError(f"identity must be a str, not {identity!r}")
    if not identity:
        raise ConfigurationError("identity must not be empty")
    try:
        size = len(identity.encode())
    except UnicodeEncodeError:
        raise ConfigurationError(f"identity {shown(identity)} cannot be encoded as UTF-8") from None
    if size > MAX_IDENTITY_BYTES:
        raise ConfigurationError(
            f"identity {shown(identity)} is {size} bytes of UTF-8, more than {MAX_IDENTITY_BYTES}"
        )
    if "\x00" in identity:
        raise ConfigurationError(f"identity must not contain NUL characters: {shown(identity)}")
    return identity


def election_token(random_part: str, identity: str) -> str:
    """The token of a candidate: unique by ``random_part`` (R2), naming ``identity``."""
    return f"{random_part}:{identity}"


def identity_of(token: str) -> str:
    """The identity a candidate's token names ("" for a token that names none)."""
    return token.partition(":")[2]


def claim_flow(
    *, key: str, token: str, term: int, ttl_ms: int, config: RedlockConfig
) -> Flow[Round]:
    """Write the leader's term record on every server that still holds ``token``.

    Returns the round: ``DONE`` where it was written. Tried once more when fewer than a
    majority confirmed and some server did not answer. Fewer than a majority
    leaves the leader leading (it holds the lock) but unseen by ``leader()`` during
    this term.
    """
    step = Fanout(Op.CLAIM_TERM, key, token, ttl_ms, config.timeout_for(ttl_ms), fence=term)
    round_ = yield step
    assert isinstance(round_, Round)
    if round_.count(Reply.DONE) < quorum(len(round_.outcomes)) and _failed(round_):
        round_ = yield _patient(step, config)
        assert isinstance(round_, Round)
    return round_


def _patient(step: Fanout, config: RedlockConfig) -> Fanout:
    """``step`` again, waiting longer for each reply: up to a tenth of the ttl, within
    ``connect_timeout``. Neither the record nor the read shortens a validity by waiting:
    the lock is held already, and a read counts its validity from its own start."""
    longer = min(config.connect_timeout, step.ttl_ms / 10_000)
    return dataclasses.replace(step, timeout=max(step.timeout, longer))


def _failed(round_: Round) -> bool:
    """Some server did not answer (an error, a timeout; not one no retry can fix): a
    second round may do better (the first use of a script costs its ``EVAL`` within the
    round's deadline, and a first connection may come late on a loaded machine)."""
    return any(not o.reply.answered and o.reply is not Reply.FATAL for o in round_.outcomes)


def leader_flow(*, key: str, ttl_ms: int, config: RedlockConfig) -> Flow[Leader | None]:
    """Read who leads election ``key`` on every server (changes nothing): see
    :func:`leader_of`. A round that cannot tell because servers did not answer is tried
    once more."""
    step = Fanout(Op.READ_LEADER, key, "", ttl_ms, config.timeout_for(ttl_ms))
    round_ = yield step
    assert isinstance(round_, Round)
    try:
        return leader_of(round_, name=key, clock_drift_factor=config.clock_drift_factor)
    except QuorumUnavailable:
        if not _failed(round_):
            raise
    round_ = yield _patient(step, config)  # once more: the read changes nothing
    assert isinstance(round_, Round)
    return leader_of(round_, name=key, clock_drift_factor=config.clock_drift_factor)


def _vote(outcome: NodeOutcome) -> tuple[str, int, int] | None:
    """(token, term, pttl ms) of a server whose record names the key's holder."""
    if outcome.reply is not Reply.TAKEN or outcome.holder is None:
        return None
    pttl, _, rest = outcome.holder.partition(" ")
    term, _, token = rest.partition(" ")
    if not (pttl.isdigit() and term.isdigit()) or int(term) == 0 or int(pttl) == 0:
        return None
    return token, int(term), int(pttl)


def leader_of(round_: Round, *, name: str, clock_drift_factor: float) -> Leader | None:
    """The leader a round of :data:`READ_LEADER` answers show, or None.

    A leader is named when a majority of all servers hold the same token in the key
    and the same term in the record, and its validity (counted from the round's start,
    with the majority's shortest time to live, drift given up) has not run out by the
    round's end. None when no such majority exists; raises :class:`QuorumUnavailable`
    when the servers that did not answer could have made one.
    """
    outcomes: Sequence[NodeOutcome] = round_.outcomes
    needed = quorum(len(outcomes))
    votes: dict[tuple[str, int], list[int]] = {}
    for outcome in outcomes:
        vote = _vote(outcome)
        if vote is not None:
            votes.setdefault(vote[:2], []).append(vote[2])
    for (token, term), ttls in votes.items():
        if len(ttls) >= needed:
            ttl_ms = sorted(ttls, reverse=True)[needed - 1]
            validity = deadline(round_.started, ttl_ms, clock_drift_factor) - round_.finished
            if validity <= 0:
                return None
            return Leader(identity_of(token), term, validity)
    unanswered = sum(1 for o in outcomes if not o.reply.answered)
    best = max((len(ttls) for ttls in votes.values()), default=0)
    if best + unanswered >= needed > best and unanswered:
        fatal = sum(1 for o in outcomes if o.reply is Reply.FATAL)
        why = f"{unanswered} of {len(outcomes)} servers did not answer"
        if fatal:
            why = (
                f"{unanswered} of {len(outcomes)} servers gave no answer that counts "
                f"({fatal} with an error no retry can fix)"
            )
        raise QuorumUnavailable(
            f"could not tell who leads election {shown(name)}: {why}. {render_outcomes(outcomes)}",
            name=name,
            outcomes=tuple(outcomes),
        )
    return None
