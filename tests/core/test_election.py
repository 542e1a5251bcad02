"""The pure part of leader election: the term record's key, who leads by a majority, and
the second, more patient round where servers did not answer."""

from __future__ import annotations

import itertools
from typing import TypeVar

import pytest

from quorumlock._algorithm.arithmetic import deadline
from quorumlock._algorithm.cluster import key_slot
from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.election import (
    Leader,
    check_election_name,
    check_identity,
    claim_flow,
    election_token,
    identity_of,
    leader_flow,
    leader_of,
    term_key,
)
from quorumlock._algorithm.flows import Fanout, Flow, Round
from quorumlock._algorithm.outcomes import NodeOutcome, Reply
from quorumlock._exceptions import ConfigurationError, QuorumUnavailable
from tests.core.scripted import drive, in_turn

T = TypeVar("T")
TOKEN = election_token("ab" * 20, "host-a:1234")


def held(pttl: int, term: int, token: str = TOKEN) -> NodeOutcome:
    return NodeOutcome("s", Reply.TAKEN, holder=f"{pttl} {term} {token}")


def free() -> NodeOutcome:
    return NodeOutcome("s", Reply.NOT_HELD)


def down() -> NodeOutcome:
    return NodeOutcome("s", Reply.TIMEOUT)


def read(*outcomes: NodeOutcome, started: float = 100.0, finished: float = 100.01) -> Round:
    return Round(started, finished, outcomes)


@pytest.mark.parametrize(
    "name", ["scheduler", "{jobs}:scheduler", "a{b", "{x", "ünï:cøde", "a{b}c}"]
)
def test_the_term_record_shares_the_slot_of_the_name(name: str) -> None:
    assert key_slot(term_key(check_election_name(name))) == key_slot(name)
    assert term_key(name).startswith("quorumlock:term:")


def test_every_election_has_a_term_record_of_its_own() -> None:
    """Every valid name of up to 6 characters over ``a{}:`` (names and hash tags): no two
    share a record (``jobs`` and ``{jobs}`` once did, and the later leader's record hid
    the other's leader), and each record shares its name's slot."""
    names = [
        "".join(chars)
        for length in range(1, 7)
        for chars in itertools.product("a{}:", repeat=length)
        if _valid("".join(chars))
    ]
    assert len({term_key(n) for n in names}) == len(names)
    assert all(key_slot(term_key(n)) == key_slot(n) for n in names)
    assert term_key("jobs") == "quorumlock:term:{jobs}"
    assert term_key("{jobs}:scheduler") == "quorumlock:term:tagged:{jobs}:scheduler"


def _valid(name: str) -> bool:
    try:
        check_election_name(name)
    except ConfigurationError:
        return False
    return True


@pytest.mark.parametrize("name", ["a}b", "{}}", "}", "x{}y", "{}"])
def test_a_closing_brace_without_a_tag_is_refused(name: str) -> None:
    with pytest.raises(ConfigurationError, match="hash tag"):
        check_election_name(name)


def test_identity_checks_and_round_trip() -> None:
    assert identity_of(TOKEN) == "host-a:1234"
    assert identity_of("plain-token-without-identity") == ""
    assert check_identity("a b:c") == "a b:c"
    with pytest.raises(TypeError):
        check_identity(None)
    for bad in ("", "x\x00y", "é" * 600):
        with pytest.raises(ConfigurationError):
            check_identity(bad)
    longest = "é" * 512  # 1024 bytes of UTF-8, in 512 characters
    assert check_identity(longest) == longest
    with pytest.raises(ConfigurationError, match="is 1025 bytes of UTF-8, more than 1024"):
        check_identity(longest + "a")


def test_a_majority_on_the_same_token_and_term_names_the_leader() -> None:
    leader = leader_of(
        read(held(9000, 7), held(8000, 7), held(5000, 7), free(), down()),
        name="n",
        clock_drift_factor=0.01,
    )
    assert leader is not None
    assert (leader.identity, leader.term) == ("host-a:1234", 7)
    # The third longest of the majority (5 s: three servers keep the key that long),
    # from the round's start, minus the drift (50 + 2 ms) and the round's 10 ms.
    assert leader.validity == pytest.approx(5.0 - 0.052 - 0.01)
    assert isinstance(leader, tuple)
    assert Leader("i", 1, 0.5) == ("i", 1, 0.5)


def test_no_leader_without_agreement() -> None:
    other = election_token("cd" * 20, "host-b:1")
    split = read(held(9000, 7), held(9000, 7), held(9000, 8, other), free(), free())
    assert leader_of(split, name="n", clock_drift_factor=0.01) is None
    # A key whose record names another holder (term 0), or a term record not written yet.
    unrecorded = read(held(9000, 0), held(9000, 0), held(9000, 7), free(), free())
    assert leader_of(unrecorded, name="n", clock_drift_factor=0.01) is None
    stale_terms = read(held(9000, 6), held(9000, 7), held(9000, 7), free(), free())
    assert leader_of(stale_terms, name="n", clock_drift_factor=0.01) is None
    # what is not a record of a leader, on a majority: a term 0, a key expiring as it
    # is read (a time to live of 0 ms), or words that are not numbers
    for holder in (f"9000 0 {TOKEN}", f"0 7 {TOKEN}", f"x 7 {TOKEN}", f"9000 x {TOKEN}", "9"):
        junk = NodeOutcome("s", Reply.TAKEN, holder=holder)
        assert (
            leader_of(read(junk, junk, junk, free(), free()), name="n", clock_drift_factor=0.01)
            is None
        )


def test_never_a_leader_whose_validity_has_passed() -> None:
    # Two of three hold, one only 30 ms more: gone by the end of a 40 ms read.
    slow = read(held(9000, 7), held(30, 7), free(), started=100.0, finished=100.04)
    assert leader_of(slow, name="n", clock_drift_factor=0.01) is None


def test_servers_that_could_tip_the_count_make_it_unknown() -> None:
    unknown = read(held(9000, 7), held(9000, 7), down(), down(), free())
    with pytest.raises(QuorumUnavailable, match="could not tell"):
        leader_of(unknown, name="n", clock_drift_factor=0.01)
    # Nothing the silent servers could say would make a majority: nobody leads.
    assert (
        leader_of(read(free(), free(), free(), down(), down()), name="n", clock_drift_factor=0.01)
        is None
    )


# what one server can answer to a read: a record of the leader (term 7), of the same
# holder in another term, of another holder, a key with no record (term 0), no key, nothing
OTHER = election_token("cd" * 20, "host-b:1")
ANSWERS = {
    "t7": lambda: held(9000, 7),
    "t8": lambda: held(9000, 8),
    "other": lambda: held(9000, 7, OTHER),
    "unrecorded": lambda: held(9000, 0),
    "free": free,
    "silent": down,
}


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5])
def test_who_leads_over_every_combination_of_answers(n: int) -> None:
    """A leader needs a majority of all servers on one holder and one term; the servers
    that did not answer make it unknown only where they could make such a majority."""
    needed = n // 2 + 1
    for names in itertools.product(ANSWERS, repeat=n):
        votes = {v: names.count(v) for v in ("t7", "t8", "other")}
        silent = names.count("silent")
        best = max(votes.values())
        round_ = read(*(ANSWERS[name]() for name in names))
        if best >= needed:
            leader = leader_of(round_, name="n", clock_drift_factor=0.01)
            assert leader is not None, names
            winner = max(votes, key=lambda v: votes[v])
            expected = ("host-b:1", 7) if winner == "other" else ("host-a:1234", int(winner[1]))
            assert (leader.identity, leader.term) == expected, names
        elif silent and best + silent >= needed:
            with pytest.raises(QuorumUnavailable, match=f"{silent} of {n} servers"):
                leader_of(round_, name="n", clock_drift_factor=0.01)
        else:
            assert leader_of(round_, name="n", clock_drift_factor=0.01) is None, names


def test_a_leader_whose_validity_ends_exactly_as_the_read_ends_is_none() -> None:
    """The validity is a strict bound: nothing is left of it at its end."""
    ends = deadline(100.0, 2000, 0.01)  # 2 s to live from the read's start, drift given up
    at_end = read(held(2000, 7), held(2000, 7), free(), started=100.0, finished=ends)
    assert leader_of(at_end, name="n", clock_drift_factor=0.01) is None
    just_before = read(held(2000, 7), held(2000, 7), free(), started=100.0, finished=ends - 0.001)
    leader = leader_of(just_before, name="n", clock_drift_factor=0.01)
    assert leader is not None
    assert leader.validity == pytest.approx(0.001)


# --------------------------------------------------------------------------------------
# a second, more patient round where servers did not answer
# --------------------------------------------------------------------------------------


def rounds(flow: Flow[T], *answers: tuple[NodeOutcome, ...]) -> tuple[T, list[Fanout]]:
    """Drive ``flow``, answering its rounds with ``answers`` in turn."""
    driven = drive(flow, in_turn(*answers), now=100.0, took=0.01)
    assert len(driven.rounds) == len(answers), "a round fewer than expected"
    return driven.result, driven.rounds


CONFIG = RedlockConfig(connect_timeout=0.5)
DONE = NodeOutcome("s", Reply.DONE)


@pytest.mark.parametrize(
    ("first", "again"),
    [
        ((DONE, DONE, down()), False),  # a majority recorded the term
        ((DONE, free(), free()), False),  # every server answered: no better next time
        ((DONE, down(), down()), True),
        ((DONE, free(), down()), True),
    ],
)
def test_a_claim_is_tried_once_more_with_patience_only_where_silence_kept_a_majority(
    first: tuple[NodeOutcome, ...], again: bool
) -> None:
    flow = claim_flow(key="k", token=TOKEN, term=7, ttl_ms=3000, config=CONFIG)
    last = (DONE, DONE, DONE)
    round_, steps = rounds(flow, first, last) if again else rounds(flow, first)
    assert round_.outcomes == (last if again else first)
    assert len(steps) == (2 if again else 1)
    if again:
        # up to a tenth of the ttl (0.3 s), within the connect timeout (0.5 s)
        assert steps[1].timeout == pytest.approx(0.3)
        assert steps[1].timeout > steps[0].timeout
        assert steps[1].fence == 7


def test_a_read_that_cannot_tell_is_tried_once_more_with_patience() -> None:
    unknown = (held(9000, 7), down(), free())
    leader, steps = rounds(
        leader_flow(key="k", ttl_ms=30_000, config=CONFIG), unknown, (held(9000, 7),) * 3
    )
    assert leader is not None
    assert len(steps) == 2
    assert steps[1].timeout == pytest.approx(0.5)  # the connect timeout, below 3 s
    # every server answered and nobody leads: no second round
    assert rounds(leader_flow(key="k", ttl_ms=30_000, config=CONFIG), (free(),) * 3) == (
        None,
        [steps[0]],
    )


def test_a_read_that_fatal_errors_leave_unknown_says_so_and_is_not_tried_again() -> None:
    """Servers that answer with an error no retry can fix (an application's key of the
    election's name, WRONGTYPE): no second round, and the error says they answered
    with such an error, where it said they "did not answer"."""
    wrong = NodeOutcome("s", Reply.FATAL, detail="WRONGTYPE")
    flow = leader_flow(key="k", ttl_ms=30_000, config=CONFIG)
    with pytest.raises(QuorumUnavailable) as raised:
        rounds(flow, (held(9000, 7), wrong, wrong))
    assert "2 of 3 servers gave no answer that counts (2 with an error no retry can fix)" in (
        str(raised.value)
    )
