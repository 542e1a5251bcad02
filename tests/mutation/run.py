"""A small mutation check: every mutant of a critical line must be killed by its tests.

Usage (from the repository root, in the project's virtualenv)::

    python tests/mutation/run.py            # every mutant of MUTANTS
    python tests/mutation/run.py --list     # the list, nothing run
    python tests/mutation/run.py 3 7        # mutants 3 and 7 only
    python tests/mutation/run.py --no-baseline   # CI: the tests just passed unmutated
    python tests/mutation/run.py --jobs 2   # two mutants at once (CI: two per CPU)

The list covers the critical lines of ``src/quorumlock/_algorithm/`` (quorum, drift,
deadlines, the acquire and extension verdicts, the renewal's give-up boundaries), the
Lua scripts, and doctor's clock-rate verdict.

The tree (``git ls-files``) is copied into a temporary directory, once per job
(``--jobs``); each mutant is applied to a copy no other job is using, its named tests
run there against that copy's ``src`` (checked: the import must resolve into the copy),
and the file is restored. Each job's tests run in forks of a process that imported
pytest and its plugins once (``starter.py``), not in a new interpreter each. The
verdicts are printed in the list's order. The worktree is never written. Before any
mutant, the named tests must pass on the unmutated copy (unless ``--no-baseline``: CI
runs the check right after the whole suite passed). The exit status is non-zero if a
mutant survives or the baseline fails twice in a row (a single failure is printed as a
flaky test and the baseline runs once more).

To grow the list, add a :class:`Mutant`: a file, a snippet of it that occurs exactly
once, its replacement, and the test files (or node ids) that must catch it. Keep the
tests to the ones that cover the line: the whole run should stay within a few minutes.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
ALGO: Final = "src/quorumlock/_algorithm/"
FLOWS: Final = ALGO + "flows.py"
SCRIPTS: Final = ALGO + "scripts.py"
ARITH: Final = ALGO + "arithmetic.py"
DOCTOR: Final = "src/quorumlock/cli/_doctor.py"
RW_TESTS: Final = "tests/integration/test_rwlock.py"
VERIFY: Final = "tests/faults/test_verify.py"
SEMAPHORE_TESTS: Final = "tests/integration/test_semaphore.py"
FAMILY_WAKE: Final = "tests/integration/test_wake_one_family.py"
FANOUT: Final = "src/quorumlock/_io/fanout.py"
ASYNC_FANOUT: Final = "src/quorumlock/_io/async_fanout.py"
WAKEUPS: Final = "src/quorumlock/_io/wakeups.py"
SYNC: Final = "src/quorumlock/_sync.py"
ERRORS: Final = "src/quorumlock/_io/errors.py"
INCARNATION: Final = "src/quorumlock/_io/incarnation.py"
RUN_CLI: Final = "src/quorumlock/cli/_run.py"
INTERRUPTS: Final = (
    "tests/integration/test_lock_objects.py::"
    "test_an_interrupt_anywhere_in_an_acquire_leaves_nothing_held"
)
RELEASE_INTERRUPTS: Final = (
    "tests/integration/test_lock_objects.py::"
    "test_an_interrupt_anywhere_in_a_release_leaves_nothing_held"
)
ASYNC_RELEASE_INTERRUPTS: Final = (
    "tests/integration/test_lock_objects.py::"
    "test_asyncio_an_interrupt_anywhere_in_a_release_leaves_nothing_held"
)
ASYNC: Final = "src/quorumlock/asyncio.py"
SHARED_WAIT: Final = (
    "tests/integration/test_lock_objects.py::"
    "test_a_thread_waiting_for_the_lock_does_not_hold_up_the_objects_other_threads"
)
TAKE_BACK: Final = "tests/integration/test_take_back.py"
SLOW_MINORITY: Final = (
    "tests/integration/test_quorum.py::"
    "test_a_slow_minority_is_not_waited_for_and_its_replies_stay_in_step"
)
ASYNC_DECIDED: Final = (
    "tests/integration/test_quorum.py::"
    "test_asyncio_replies_in_before_a_decided_round_resumes_stay_not_read"
)
TEST_TIMEOUT: Final = 600.0
STARTER: Final = Path(__file__).with_name("starter.py")


@dataclass(frozen=True)
class Mutant:
    why: str  # what the mutant breaks, in a few words
    path: str  # relative to the repository root
    before: str  # occurs exactly once in the file
    after: str
    tests: tuple[str, ...]  # test files or node ids that must fail


MUTANTS: Final = (
    Mutant(
        "a majority is n // 2, not n // 2 + 1 (R5)",
        ARITH,
        "return n // 2 + 1",
        "return n // 2",
        ("tests/core/test_arithmetic.py",),
    ),
    Mutant(
        "a waiter far back in line polls as often as the head",
        ARITH,
        "return min(place - 1, QUEUE_BACKOFF_MAX)",
        "return 1",
        ("tests/core/test_flows.py::test_a_waiter_far_back_in_line_polls_less_often",),
    ),
    Mutant(
        "the place in line is the nearest any server reports, not a majority's",
        FLOWS,
        "return places[needed - 1] if len(places) >= needed else None",
        "return places[0] if places else None",
        ("tests/core/test_flows.py::test_a_waiter_far_back_in_line_polls_less_often",),
    ),
    Mutant(
        "no 2 ms floor in the drift allowance",
        ARITH,
        "return ttl_ms / 1000 * clock_drift_factor + DRIFT_FLOOR",
        "return ttl_ms / 1000 * clock_drift_factor",
        ("tests/core/test_arithmetic.py",),
    ),
    Mutant(
        "the deadline adds the drift instead of subtracting it",
        ARITH,
        "return start + ttl_ms / 1000 - drift(ttl_ms, clock_drift_factor)",
        "return start + ttl_ms / 1000 + drift(ttl_ms, clock_drift_factor)",
        ("tests/core/test_arithmetic.py",),
    ),
    Mutant(
        "an acquire that ends exactly at its deadline counts",
        FLOWS,
        "in_time=round_.finished < holds_until",
        "in_time=round_.finished <= holds_until",
        ("tests/core/test_renewal.py", "tests/core/test_flows.py"),
    ),
    Mutant(
        "an extension confirmed by a minority counts",
        FLOWS,
        "enough = confirmed >= quorum(len(round_.outcomes))",
        "enough = confirmed >= quorum(len(round_.outcomes)) - 1",
        ("tests/core/test_renewal.py", "tests/core/test_flows.py"),
    ),
    Mutant(
        "an extension sent at the deadline (R10)",
        FLOWS,
        "if now >= held_until:",
        "if now > held_until:",
        ("tests/core/test_renewal.py",),
    ),
    Mutant(
        "an extension confirmed after the new deadline counts",
        FLOWS,
        "if enough and round_.finished < min(held_until, new_deadline):",
        "if enough and round_.finished < held_until:",
        ("tests/core/test_renewal.py",),
    ),
    Mutant(
        "a renewal gives up one 'not held' too early",
        FLOWS,
        "gone = round_.count(Reply.NOT_HELD) > n - quorum(n)",
        "gone = round_.count(Reply.NOT_HELD) >= n - quorum(n)",
        ("tests/core/test_renewal.py",),
    ),
    Mutant(
        "a renewal keeps trying when its round ended at the deadline",
        FLOWS,
        "if not final and round_.finished < held_until:",
        "if not final and round_.finished <= held_until:",
        ("tests/core/test_renewal.py",),
    ),
    Mutant(
        "a renewal that finds the lock lost releases it before the deadline",
        FLOWS,
        "if not final and round_.finished < held_until:",
        "if not final and not gone and round_.finished < held_until:",
        (
            "tests/core/test_renewal.py",
            "tests/integration/test_exclusion.py::"
            "test_a_lease_found_lost_keeps_its_keys_while_the_holder_works",
        ),
    ),
    Mutant(
        "renewals due one after another go out one small batch each (no early margin)",
        ALGO + "lease.py",
        "EARLY = 1 / 30",
        "EARLY = 0.0",
        ("tests/core/test_lease_steps.py",),
    ),
    Mutant(
        "the undo of a split vote announces while a holder has a majority",
        FLOWS,
        "return max(holders.values(), default=0) < quorum(len(outcomes))",
        "return max(holders.values(), default=0) <= quorum(len(outcomes))",
        (
            "tests/integration/test_wakeups.py::test_the_undo_of_a_split_vote_announces_the_free_lock",
        ),
    ),
    Mutant(
        "a refusal naming our own token (an earlier attempt's lost grant) is not undone",
        FLOWS,
        "not (o.reply is Reply.TAKEN and o.holder is not None and o.holder != ours)",
        "not (o.reply is Reply.TAKEN and o.holder is not None)",
        ("tests/core/test_flows.py",),
    ),
    Mutant(
        "a refusal by other holders everywhere still runs an undo round",
        FLOWS,
        "        if any(targets):\n",
        "        if True:\n",
        ("tests/core/test_flows.py",),
    ),
    Mutant(
        "the undo of a failed attempt reaches every server again, refusals included",
        FLOWS,
        "        if not undo_everywhere:\n",
        "        if False:\n",
        ("tests/integration/test_refusal.py",),
    ),
    Mutant(
        "the undo of a failed attempt skips a server whose state is unknown",
        FLOWS,
        "targets = undo_targets(round_.outcomes, token)",
        "targets = tuple(o.reply is Reply.GRANTED for o in round_.outcomes)",
        ("tests/core/test_flows.py",),
    ),
    Mutant(
        "the acquire SET without NX takes a held lock",
        SCRIPTS,
        'if redis.call("set", KEYS[1], ARGV[1], "NX", "PX", ARGV[2]) then',
        'if redis.call("set", KEYS[1], ARGV[1], "PX", ARGV[2]) then',
        ("tests/integration/test_quarantine.py",),
    ),
    Mutant(
        "the quarantine ends at once",
        SCRIPTS,
        "left = math.max(0, since + max_ttl - math.floor(now / 1000))",
        "left = 0",
        ("tests/integration/test_quarantine.py",),
    ),
    Mutant(
        "the release deletes whatever token the key holds (R9)",
        SCRIPTS,
        'if redis.call("get", KEYS[1]) == ARGV[1] then\n    redis.call("del", KEYS[1])',
        'if redis.call("get", KEYS[1]) then\n    redis.call("del", KEYS[1])',
        ("tests/integration/test_lock.py",),
    ),
    Mutant(
        "the release announces where it deleted nothing",
        SCRIPTS,
        '    return 1\nelse\n    return 0\nend\n""",\n)\n\n',
        "    return 1\nelse\n"
        '    redis.pcall("publish", "quorumlock:released:" .. KEYS[1], "")\n'
        '    return 0\nend\n""",\n)\n\n',
        (
            "tests/integration/test_wakeups.py"
            "::test_a_release_announces_only_where_it_deleted_the_key",
        ),
    ),
    Mutant(
        "the release wakes an expired waiter at the head of the queue",
        SCRIPTS,
        '    for _, dead in ipairs(redis.call("zrangebyscore", expiry, "-inf", now))',
        '    for _, dead in ipairs(redis.call("zrangebyscore", expiry, "-inf", 0))',
        (
            "tests/integration/test_wake_one.py"
            "::test_a_dead_waiters_entry_does_not_block_the_line[sync-True]",
        ),
    ),
    Mutant(
        "the release names nobody: every waiting process is woken",
        SCRIPTS,
        "            head = first\n",
        '            head = ""\n',
        (
            "tests/integration/test_wake_one.py"
            "::test_waiters_are_woken_one_per_release_in_arrival_order[sync]",
        ),
    ),
    Mutant(
        "a waiter's refused attempt does not stand in line (a join round more each time)",
        SCRIPTS,
        'elseif quorumlock_arrival ~= "" then',
        "elseif false then",
        (
            "tests/integration/test_wake_one.py"
            "::test_the_queued_acquire_takes_the_entry_off_only_where_it_writes_the_lock",
        ),
    ),
    Mutant(
        "a process whose release woke a waiter races it for the lock",
        FLOWS,
        "behind = just_woke and not fair",
        "behind = False",
        (
            "tests/integration/test_wake_one.py::test_a_process_that_releases_and_acquires"
            "_again_stands_behind_the_waiter_it_woke[sync]",
        ),
    ),
    Mutant(
        "a fair lock's acquire stands behind the head its release woke, as the default's",
        FLOWS,
        "behind = just_woke and not fair",
        "behind = just_woke",
        (
            "tests/core/test_flows.py"
            "::test_a_fair_acquire_tries_at_once_after_its_release_woke_the_head",
            "tests/integration/test_wake_one.py::test_a_fair_process_whose_release_woke_the"
            "_head_takes_the_lock_the_head_is_done_with[sync]",
        ),
    ),
    Mutant(
        "a waiter's arrival draws a fraction of a whole millisecond",
        "src/quorumlock/_io/wakeups.py",
        "    return time.time() * 1000 + random.random() / 1000\n",
        "    return time.time() * 1000 + random.random()\n",
        ("tests/core/test_lingering.py::test_waiters_of_one_machine_keep_the_order_they_came_in",),
    ),
    Mutant(
        "a release that finds its waiter woken already wakes nobody with its later news",
        "src/quorumlock/_io/wakeups.py",
        "        chosen = waiting or [w for w in self.waiters if w.queued] or self.waiters\n",
        "        chosen = waiting\n",
        (
            "tests/core/test_lingering.py::test_a_release_that_finds_its_waiter_woken_already"
            "_wakes_it_again_after_its_attempt",
        ),
    ),
    Mutant(
        "a process named by a majority before its release returned stands behind anyway",
        "src/quorumlock/_io/wakeups.py",
        "            if since and max(since.values()) >= needed:\n",
        "            if False:\n",
        (
            "tests/core/test_lingering.py::test_an_entry_named_before_the_release_that_put_it"
            "_in_line_returned_is_not_waited_on",
        ),
    ),
    Mutant(
        "a release does not put its process in line behind the waiter it woke",
        FLOWS,
        "    lease_ms = 0 if fair or keys else queue_lease_ms(config.retry_delay)\n",
        "    lease_ms = 0\n",
        (
            "tests/integration/test_wake_one.py::test_a_process_that_releases_and_acquires"
            "_again_stands_behind_the_waiter_it_woke[sync]",
        ),
    ),
    Mutant(
        "a process put in line by its release far back polls as often as the head",
        FLOWS,
        "        place = heard.place  # where that release put this process in line, if it did\n",
        "        place = None\n",
        (
            "tests/core/test_flows.py::test_a_process_its_release_put_in_line_polls_as_its_place_says",
        ),
    ),
    Mutant(
        "a process put in line by its release that does not come back keeps its turn",
        "src/quorumlock/_io/wakeups.py",
        "        del self._at[key]\n        return True\n",
        "        del self._at[key]\n        return False\n",
        (
            "tests/integration/test_wake_one.py::test_a_process_put_in_line_by_its_release"
            "_that_does_not_come_back_passes_its_turn[sync]",
        ),
    ),
    Mutant(
        "a process put in line by its release passes its turn where the lock is taken",
        SCRIPTS,
        '    if ARGV[2] == "pass" and not redis.call("get", KEYS[3]) then\n',
        '    if ARGV[2] == "pass" then\n',
        (
            "tests/integration/test_wake_one.py::test_a_pass_wakes_the_next_waiter_only"
            "_where_the_lock_is_free",
        ),
    ),
    Mutant(
        "a release that names the head is published to every listening process",
        SCRIPTS,
        '        redis.pcall("publish", "quorumlock:wake:" .. head,'
        ' #key .. " " .. key .. notice)\n',
        '        redis.pcall("publish", "quorumlock:released:" .. key, head .. " " .. notice)\n',
        (
            "tests/integration/test_wake_one.py"
            "::test_a_release_that_names_the_head_goes_to_its_process_only",
        ),
    ),
    Mutant(
        "a set's waiter joins the queue of its first key (its release names no head)",
        FLOWS,
        "    queue = queue and not keys\n",
        "    queue = queue\n",
        (
            f"{FAMILY_WAKE}::test_family_waiters_join_no_queue_and_are_woken_by_the_release"
            "[sync-lock_many-default]",
        ),
    ),
    Mutant(
        "a read-write lock's waiter joins a queue (its release names no head)",
        ALGO + "rwlock.py",
        "    queued = False\n",
        "    queued = True\n",
        (
            f"{FAMILY_WAKE}::test_family_waiters_join_no_queue_and_are_woken_by_the_release"
            "[sync-rwlock-default]",
        ),
    ),
    Mutant(
        "a release that names a process wakes its set's waiter, not its waiter in line",
        "src/quorumlock/_io/wakeups.py",
        "waiting = [w for w in waiting if w.queued] or waiting",
        "waiting = waiting",
        (
            f"{FAMILY_WAKE}::test_a_release_that_names_a_process_wakes_its_waiter_in_line_not"
            "_its_set[sync]",
        ),
    ),
    Mutant(
        "a fair waiter that arrived before the head of the line is refused as a newcomer",
        SCRIPTS,
        "    and tonumber(quorumlock_arrival) < tonumber(quorumlock_first[2])\n",
        "    and false\n",
        (
            "tests/integration/test_wake_one.py"
            "::test_a_fair_waiter_that_arrived_before_the_head_of_the_line_goes_first[sync]",
        ),
    ),
    Mutant(
        "a fair acquire lets anyone in, not only the head of the queue",
        SCRIPTS,
        "if quorumlock_head and quorumlock_head ~= quorumlock_member and not quorumlock_earlier"
        " then",
        "if false then",
        (
            "tests/integration/test_wake_one.py"
            "::test_a_fair_acquire_waits_for_the_head_of_the_line[sync]",
        ),
    ),
    Mutant(
        "the extension resets the ttl of another holder's key (R10)",
        SCRIPTS,
        'if redis.call("get", KEYS[1]) == ARGV[1] then\n    return redis.call("pexpire"',
        'if redis.call("get", KEYS[1]) then\n    return redis.call("pexpire"',
        (
            "tests/integration/test_exclusion.py"
            "::test_extend_with_a_lost_key_never_touches_the_new_holder",
        ),
    ),
    Mutant(
        "the fence guard lets a token one below the highest write",
        SCRIPTS,
        "        or seen > tonumber(ARGV[1]) then",
        "        or seen > tonumber(ARGV[1]) + 1 then",
        (
            "tests/integration/test_fencing.py::"
            "test_paused_holder_gets_stale_fencing_token_and_its_write_is_not_applied",
        ),
    ),
    Mutant(
        "doctor passes a clock off by twice the drift allowance",
        DOCTOR,
        "if beyond > _DRIFT_FACTOR:",
        "if beyond > 2 * _DRIFT_FACTOR:",
        ("tests/cli/test_doctor_clock_rate.py",),
    ),
    Mutant(
        "doctor holds the uncertainty of its readings against a server",
        DOCTOR,
        "gap = max(0.0, rate - uncertainty - highest, lowest - (rate + uncertainty))",
        "gap = max(0.0, rate - highest, lowest - rate)",
        ("tests/cli/test_doctor_clock_rate.py",),
    ),
    Mutant(
        "doctor holds the uncertainty of the servers' median against a server",
        DOCTOR,
        "gap = max(0.0, rate - uncertainty - highest, lowest - (rate + uncertainty))",
        "gap = max(0.0, rate - uncertainty - median, median - (rate + uncertainty))",
        ("tests/cli/test_doctor_clock_rate.py",),
    ),
    Mutant(
        "a reader is granted while a writer holds",
        SCRIPTS,
        'local rw_against, rw_aside = {"w", "i"}, "r"',
        'local rw_against, rw_aside = {"i"}, "r"',
        (f"{RW_TESTS}::test_readers_share_and_a_writer_excludes_everyone",),
    ),
    Mutant(
        "a writer is granted while readers hold",
        SCRIPTS,
        'rw_against, rw_aside = {"w", "r"}, "i"',
        'rw_against, rw_aside = {"w"}, "i"',
        (f"{RW_TESTS}::test_each_mode_is_granted_iff_a_majority_allows_it",),
    ),
    Mutant(
        "a waiting writer's undo drops its intent: readers slip in between its attempts",
        SCRIPTS,
        "if intent > 0 then",
        "if false then",
        (f"{RW_TESTS}::test_a_waiting_writer_keeps_new_readers_out",),
    ),
    Mutant(
        "expired holds are never dropped: a dead writer's intent stays with the key",
        SCRIPTS,
        "    if found[2] and tonumber(found[2]) - rw_base[kind] <= rw_now then",
        "    if false then",
        (f"{RW_TESTS}::test_a_dead_writers_intent_lapses_while_a_reader_holds_on",),
    ),
    Mutant(
        "the downgrade leaves no read hold behind the write hold it removes",
        SCRIPTS,
        'redis.call("zadd", KEYS[1], string.format("%.0f", tonumber(score)',
        'redis.call("type", KEYS[1], string.format("%.0f", tonumber(score)',
        (f"{RW_TESTS}::test_downgrade_turns_the_writer_into_a_reader_atomically",),
    ),
    # The fault-injection kit's cells for the lock family: each checker must catch a
    # server whose own check is gone, with no fault injected at all.
    Mutant(
        "a server grants a set while a name of it other than the first is held (verify)",
        SCRIPTS,
        "    if i ~= 2 and not holder then\n",
        "    if i == 1 and not holder then\n",
        (f"{VERIFY}::test_lock_many_keeps_overlapping_sets_apart_under_faults[none]",),
    ),
    Mutant(
        "a reader is granted while a writer holds (verify)",
        SCRIPTS,
        'local rw_against, rw_aside = {"w", "i"}, "r"',
        'local rw_against, rw_aside = {"i"}, "r"',
        (f"{VERIFY}::test_the_rwlock_keeps_readers_and_writers_apart_under_faults[none]",),
    ),
    # A round decided by a majority, and the replies it leaves unread.
    Mutant(
        "an acquire waits for every reply, also after a majority granted it",
        ALGO + "round.py",
        "step.op in EARLY_OPS and not step.every and not step.fencing and not step.joins",
        "False",
        ("tests/core/test_round.py", f"{SLOW_MINORITY}[sync]"),
    ),
    Mutant(
        "with fencing, an acquire ends at a majority: a jumped counter is not its token",
        ALGO + "round.py",
        "and not step.every and not step.fencing",
        "and not step.every",
        ("tests/core/test_round.py",),
    ),
    Mutant(
        "a waiter's attempt ends at a majority: where its entry stands goes unread",
        ALGO + "round.py",
        "and not step.fencing and not step.joins",
        "and not step.fencing",
        ("tests/core/test_round.py",),
    ),
    Mutant(
        "a reply left unread is not owed: the next round reads it as its own",
        FANOUT,
        "                owed.append((self.step, self.nodes[i]))\n",
        "",
        (f"{SLOW_MINORITY}[sync]",),
    ),
    Mutant(
        "a script a slow server lost is never sent in its EVAL form again",
        FANOUT,
        "if unloaded and first and self._lacks_script(conn, node, unloaded):",
        "if False:",
        (f"{SLOW_MINORITY}[sync]",),
    ),
    Mutant(
        "a waiter's rounds busy-poll, taking the cores the processes taking turns need",
        FANOUT,
        "spin_until = began + (0.0 if self.step.contended else spin.budget())",
        "spin_until = began + spin.budget()",
        ("tests/integration/test_spin.py::test_the_rounds_of_a_waiter_never_spin",),
    ),
    Mutant(
        "asyncio: a script a slow server lost is never sent in its EVAL form again",
        "src/quorumlock/_io/async_fanout.py",
        "            self._lost_script(index)\n",
        "            pass\n",
        (f"{SLOW_MINORITY}[async]",),
    ),
    Mutant(
        "asyncio: a reply in before an early-decided round's task resumes is still recorded",
        "src/quorumlock/_io/async_fanout.py",
        "        if machine.decided:\n",
        "        if False:\n",
        (ASYNC_DECIDED,),
    ),
    Mutant(
        "a command the socket's buffer could not take whole is cut short",
        FANOUT,
        "        if written == len(data):\n",
        "        if True:\n",
        (
            "tests/integration/test_read_path.py::"
            "test_a_command_larger_than_the_socket_buffer_is_written_whole[with-a-timeout]",
        ),
    ),
    Mutant(
        "an idle connection the server closed is written to (a restart fails a round)",
        FANOUT,
        "        if item is not None and now - item[1] >= FRESH:\n",
        "        if False:\n",
        (
            "tests/integration/test_read_path.py::"
            "test_idle_connections_are_looked_at_unless_just_used[with-a-timeout]",
        ),
    ),
    Mutant(
        "the acquire script's short answer hides the fencing counter it drew",
        SCRIPTS,
        "if granted == 1 and fence == 0 then\n",
        "if granted == 1 then\n",
        (
            "tests/integration/test_fencing.py::"
            "test_tokens_strictly_increase_across_sequential_holders",
        ),
    ),
    Mutant(
        "a waiter's short answer hides the fencing counter it drew",
        SCRIPTS,
        " and quorumlock_reply[2] == 0 and quorumlock_reply[3] == 0 then\n",
        " and quorumlock_reply[2] == 0 then\n",
        (
            "tests/integration/test_fencing.py::"
            "test_tokens_strictly_increase_across_contending_workers",
        ),
    ),
    Mutant(
        "a process looping on a name keeps it for as long as it loops",
        WAKEUPS,
        "return turn.kept < TAKE_BACK_HOLDS and now - began < TAKE_BACK_TURN",
        "return True",
        (TAKE_BACK, "tests/core/test_turns.py"),
    ),
    Mutant(
        "a release that left the next waiter asleep never wakes it",
        WAKEUPS,
        "self._due.setdefault(key, finished + KEPT_WAKE)",
        "pass",
        (
            f"{TAKE_BACK}::test_a_release_that_left_the_waiter_asleep_wakes_it_when_the_worker_stops",
        ),
    ),
    Mutant(
        "an acquire does not call off the wake-up its process's release owes",
        WAKEUPS,
        "        turn.back, turn.asked = True, now\n",
        "        turn.asked = now\n",
        ("tests/core/test_turns.py",),
    ),
    Mutant(
        "a process that comes back after its wake-up was due still takes the lock back",
        WAKEUPS,
        "key in self._due and (at_once or now < turn.wake_at)",
        "key in self._due",
        ("tests/core/test_turns.py",),
    ),
    Mutant(
        "the next acquire stands behind a woken waiter that came and went already",
        WAKEUPS,
        "    gone = stood is None and lingering.announced(\n",
        "    gone = False and lingering.announced(\n",
        ("tests/core/test_lingering.py",),
    ),
    Mutant(
        "sync: an acquire interrupted as it returns keeps the hold its caller cannot know of",
        SYNC,
        "            if self._generation != mark.generation and self._state.held:\n",
        "            if False:\n",
        (f"{INTERRUPTS}[lock-acquire]", f"{INTERRUPTS}[lock-with]"),
    ),
    Mutant(
        "sync: an acquire interrupted as it took its turn leaves the object taken",
        SYNC,
        "and self._occupant in (me, None)  # None: interrupted as it took the turn",
        "and False",
        (f"{INTERRUPTS}[lock-acquire]",),
    ),
    Mutant(
        "sync: a release interrupted as it freed the object leaves the object taken",
        SYNC,
        "        elif self._occupied:\n            self._vacate()\n",
        "        elif False:\n            self._vacate()\n",
        (f"{RELEASE_INTERRUPTS}[lock-release]",),
    ),
    Mutant(
        "sync: an export interrupted once it let the lock go leaves the keys to the ttl",
        SYNC,
        " and held and not keep and not self._state.held:\n",
        " and False:\n",
        (f"{RELEASE_INTERRUPTS}[lock-export]",),
    ),
    Mutant(
        "asyncio: an export cut short once it let the lock go leaves the keys to the ttl",
        ASYNC,
        "            if held and not keep and not self._state.held:  # let go, handle not",
        "            if False:  #",
        (
            "tests/integration/test_async_cancel.py::test_cancelling_a_hand_over_at_any_point_leaves_no_key",
            f"{ASYNC_RELEASE_INTERRUPTS}[lock-export]",
        ),
    ),
    Mutant(
        "sync: a soft time limit (an Exception) in a release is not taken for an interrupt",
        SYNC,
        "    return not isinstance(error, QuorumLockError)\n",
        "    return not isinstance(error, Exception)\n",
        (f"{RELEASE_INTERRUPTS}[lock-release-soft-limit]",),
    ),
    Mutant(
        "sync: a campaign interrupted as the lock's exit began keeps the leadership",
        SYNC,
        "                    lock._finish_interrupted_release()\n",
        "                    pass\n",
        (
            "tests/integration/test_election.py::"
            "test_an_interrupt_anywhere_in_a_campaign_leaves_no_leader[exit]",
        ),
    ),
    Mutant(
        "asyncio: only a cancellation, not a signal handler's exception, cleans an acquire",
        ASYNC,
        "                if _cut_short(exc):\n",
        "                if isinstance(exc, asyncio.CancelledError):\n",
        (
            "tests/integration/test_lock_objects.py::"
            "test_asyncio_an_interrupt_after_the_acquire_round_deletes_the_keys[SystemExit]",
        ),
    ),
    Mutant(
        "celery: a soft time limit as the lock's enter returned leaves the lock held",
        "src/quorumlock/celery.py",
        "            except BaseException as exc:  # cut short (a soft time limit) as it returned\n"
        "                lock.__exit__(type(exc), exc, exc.__traceback__)\n",
        "            except BaseException as exc:  # cut short (a soft time limit) as it returned\n"
        "                pass\n",
        (
            "tests/integration/test_celery.py::"
            "test_a_soft_time_limit_anywhere_in_a_direct_call_leaves_no_lock[check]",
        ),
    ),
    Mutant(
        "sync: a batch of renewals that fails as a whole stops its locks' leases untold",
        SYNC,
        "                results = [exc] * len(renewals)\n",
        "                raise\n",
        (
            "tests/integration/test_batch.py::"
            "test_a_batch_of_renewals_that_fails_as_a_whole_is_retried_or_told_lost[once]",
        ),
    ),
    Mutant(
        "sync: an error in one lock's lease step drops the other locks of its batch",
        SYNC,
        "                lock._renewed(time.monotonic(), exc)\n                continue\n",
        "                raise\n",
        (
            "tests/integration/test_batch.py::"
            "test_an_error_in_one_locks_step_fails_its_renewal_only",
        ),
    ),
    Mutant(
        "asyncio: an acquire interrupted as it returns keeps the hold its caller cannot know of",
        ASYNC,
        "            if self._state.token == mark.token or self._occupant is not me:\n",
        "            if True:\n",
        (
            "tests/integration/test_lock_objects.py::"
            "test_asyncio_an_interrupt_anywhere_in_an_acquire_leaves_nothing_held[lock-acquire]",
        ),
    ),
    Mutant(
        "asyncio: an acquire interrupted as it took the object's gate leaves it taken",
        ASYNC,
        "            self._free_in_full()  # interrupted as it took the gate, or the object\n",
        "            pass\n",
        (
            "tests/integration/test_lock_objects.py::"
            "test_asyncio_an_interrupt_anywhere_in_an_acquire_leaves_nothing_held[lock-acquire]",
        ),
    ),
    Mutant(
        "sync: an inner hold's interrupted exit leaves the outer one a level short",
        SYNC,
        "            self._depth = depth - 1\n",
        "            pass\n",
        (f"{RELEASE_INTERRUPTS}[inner-with]",),
    ),
    Mutant(
        "a release that names the process leaves a waiter woken to requeue only requeueing",
        WAKEUPS,
        "    return not waiter.notified() or waiter.requeue\n",
        "    return not waiter.notified()\n",
        ("tests/core/test_lingering.py",),
    ),
    Mutant(
        "a fair attempt refused while the lock is free leaves the head asleep",
        FLOWS,
        "            if fair and not just_woke and refused_while_free(round_.outcomes):\n",
        "            if False and not just_woke and refused_while_free(round_.outcomes):\n",
        (
            "tests/core/test_flows.py",
            "tests/integration/test_wake_one.py::"
            "test_a_fair_waiter_refused_while_the_lock_is_free_wakes_the_head",
        ),
    ),
    Mutant(
        "a release that named the head of the line ends at a majority all the same",
        ALGO + "round.py",
        "            # what the process does next, so every answer is read.\n"
        "            self._early = False\n",
        "            pass\n",
        ("tests/core/test_round.py",),
    ),
    Mutant(
        "a release ends at a majority where a server may have lost its script",
        ALGO + "round.py",
        "if step.op is Op.RELEASE and (step.keys or not release_early):",
        "if step.op is Op.RELEASE and step.keys:",
        ("tests/core/test_round.py",),
    ),
    Mutant(
        "asyncio: a release that answered NOSCRIPT after its round ended is not sent again",
        "src/quorumlock/_io/async_fanout.py",
        "            pipe.request(self, index, pack(self._eval_form(index, pipe)))\n"
        "            return\n",
        "",
        (
            "tests/integration/test_quorum.py::"
            "test_a_release_a_majority_confirmed_runs_again_where_the_script_was_flushed",
        ),
    ),
    Mutant(
        "sync: a release that answered NOSCRIPT after its round ended is not sent again",
        "src/quorumlock/_io/fanout.py",
        "    lost = _RESEND.pop(conn, None)\n",
        "    lost = _RESEND.pop(conn, None) and None\n",
        (
            "tests/integration/test_quorum.py::"
            "test_a_sync_release_a_majority_confirmed_runs_again_where_the_script_was_flushed",
        ),
    ),
    Mutant(
        "a look for the wake-up a release owes sends it before the release is KEPT_WAKE old",
        WAKEUPS,
        "                if now is not None and now < turn.wake_at:\n",
        "                if False:\n",
        ("tests/core/test_turns.py",),
    ),
    Mutant(
        "every release that keeps the turn moves the look for its wake-up",
        WAKEUPS,
        "self._due.setdefault(key, finished + KEPT_WAKE)",
        "self._due[key] = finished + KEPT_WAKE",
        ("tests/core/test_turns.py",),
    ),
    Mutant(
        "a long hold is taken back",
        WAKEUPS,
        "        if now - max(turn.held, turn.asked) >= TAKE_BACK_HOLD:\n",
        "        if False:\n",
        (
            "tests/core/test_turns.py",
            f"{TAKE_BACK}::test_a_loop_of_long_holds_wakes_the_line_at_every_release",
        ),
    ),
    Mutant(
        "a hold taken back with a plain attempt is timed from a grant nobody told",
        WAKEUPS,
        "        if now - max(turn.held, turn.asked) >= TAKE_BACK_HOLD:\n",
        "        if now - turn.held >= TAKE_BACK_HOLD:\n",
        ("tests/core/test_turns.py",),
    ),
    Mutant(
        "asyncio: a release cut short leaves its keys to the ttl and the object taken",
        ASYNC,
        "            if began or (_cut_short(exc) and not self._releasing and self._holds):\n",
        "            if False:\n",
        (f"{ASYNC_RELEASE_INTERRUPTS}[lock-release]",),
    ),
    Mutant(
        "asyncio: a release whose own task was interrupted leaves its keys to the ttl",
        ASYNC,
        "                if work is None or work.cancelled() or _cut_short(work.exception()):\n",
        "                if work is None:\n",
        (f"{ASYNC_RELEASE_INTERRUPTS}[lock-release]",),
    ),
    Mutant(
        "asyncio: a release interrupted as it freed the object leaves its gate shut",
        ASYNC,
        "                self._releasing = False\n                self._free_in_full()\n",
        "                self._releasing = False\n",
        (f"{ASYNC_RELEASE_INTERRUPTS}[lock-release]",),
    ),
    Mutant(
        "asyncio: an async with block's exit interrupted before its release leaves it held",
        ASYNC,
        "        except BaseException as interrupt:\n"
        "            await self._finish_interrupted_release(interrupt, me)\n",
        "        except BaseException as interrupt:\n            pass\n",
        (f"{ASYNC_RELEASE_INTERRUPTS}[lock-with]",),
    ),
    Mutant(
        "asyncio: an interrupted inner release of a reentrant lock leaves its depth",
        ASYNC,
        "            self._depth = depth - 1\n",
        "            pass\n",
        (f"{ASYNC_RELEASE_INTERRUPTS}[inner-release]",),
    ),
    Mutant(
        "asyncio: a campaign interrupted as the lock's exit began keeps the leadership",
        ASYNC,
        "            await lock._finish_interrupted_release(error, _current_task())\n",
        "            pass\n",
        (
            "tests/integration/test_election.py::"
            "test_asyncio_an_interrupt_anywhere_in_a_campaign_leaves_no_leader[exit]",
        ),
    ),
    Mutant(
        "asyncio: a hand-over cut short once the object was freed deletes the next hold's keys",
        ASYNC,
        "        state = None if ours else copy.copy(self._state)\n",
        "        state = None\n",
        (f"{ASYNC_RELEASE_INTERRUPTS}[lock-export-waited]",),
    ),
    Mutant(
        "asyncio: a release cut short once the gate was handed on frees it again",
        ASYNC,
        "        return self.taken and self.holder is holder and not handed\n",
        "        return self.taken and self.holder is holder\n",
        (f"{ASYNC_RELEASE_INTERRUPTS}[lock-release-waited]",),
    ),
    Mutant(
        "asyncio: the gate is taken off the waiter's entry before it is handed over",
        ASYNC,
        "            waiter, _ = self._waiters[0]\n",
        "            waiter, _ = self._waiters.popleft()\n",
        (f"{ASYNC_RELEASE_INTERRUPTS}[lock-release-waited]",),
    ),
    Mutant(
        "asyncio: a refusal interrupted once it passed the object on frees it again",
        ASYNC,
        "                if ours:\n                    self._free_in_full()\n            raise\n",
        "                self._vacate()\n            raise\n",
        (
            "tests/integration/test_lock_objects.py::test_asyncio_an_interrupt_anywhere_"
            "in_an_acquire_with_a_task_waiting_passes_the_object_on[refused]",
        ),
    ),
    Mutant(
        "sync: an acquire keeps its object's mutex while it waits for the lock",
        SYNC,
        "            acquired = self._redlock._run(flow, self._mutex)\n",
        "            acquired = self._redlock._run(flow)\n",
        (f"{SHARED_WAIT}[lock-default]",),
    ),
    Mutant(
        "sync: a release by another thread frees the object while its acquire waits",
        SYNC,
        '        self._refuse_while_acquiring("release")\n',
        "        pass\n",
        (f"{SHARED_WAIT}[lock-default]",),
    ),
    Mutant(
        "sync: an acquire interrupted as it waits with its mutex let go does not take it back",
        SYNC,
        "        return wait()\n    finally:\n"
        "        if saved:\n            acquire_restore(saved[0])\n",
        "        result = wait()\n    except BaseException:\n        raise\n"
        "    if saved:\n        acquire_restore(saved[0])\n    return result\n",
        (
            "tests/integration/test_lock_objects.py::"
            "test_a_signal_while_an_acquire_waits_for_the_lock_leaves_the_object_free[default]",
        ),
    ),
    Mutant(
        "sync: a thread interrupted as a release wakes it for its turn wakes nobody else",
        SYNC,
        "            if not self._occupied:\n                self._turn.notify()\n"
        "            raise\n",
        "            raise\n",
        (
            "tests/integration/test_lock_objects.py::"
            "test_a_thread_interrupted_as_it_is_woken_for_its_turn_passes_the_object_on[lock]",
        ),
    ),
    Mutant(
        "sync: an acquire's mutex is let go for good by an interrupt as the letting go returns",
        SYNC,
        "    try:\n        saved.extend(map(operator.call, (release_save,)))\n",
        "    saved.append(release_save())\n    try:\n",
        ("tests/core/test_mutex_let_go.py",),
    ),
    Mutant(
        "a waiter that leaves with a wake-up it never tried wakes no other waiter",
        "src/quorumlock/_io/wakeups.py",
        "        nxt.notify(alone=waiter.alone)\n",
        "        pass\n",
        (
            "tests/core/test_lingering.py::"
            "test_a_waiter_that_leaves_with_a_wake_up_it_never_tried_hands_it_on",
        ),
    ),
    Mutant(
        "sync: a waiter that gives up leaves the line and passes no turn on",
        SYNC,
        "        step = leave_step(self.config, key, member, passing=passing)\n",
        "        step = leave_step(self.config, key, member)\n",
        (
            "tests/integration/test_wake_one.py::"
            "test_a_waiter_that_gives_up_as_a_release_names_its_process_passes_the_turn_on",
        ),
    ),
    Mutant(
        "a cancelled waiter's wake-up goes to no other waiter",
        "src/quorumlock/_io/wakeups.py",
        "    woken = owed(waiter, acquired=acquired)\n",
        "    woken = False\n",
        (
            "tests/integration/test_wake_one.py::"
            "test_an_asyncio_waiter_cancelled_as_it_is_woken_passes_the_wake_up_on",
        ),
    ),
    Mutant(
        "asyncio: a waiter that gives up leaves the line and passes no turn on",
        ASYNC,
        "        step = leave_step(self.config, key, member, passing=passing)\n",
        "        step = leave_step(self.config, key, member)\n",
        (
            "tests/integration/test_wake_one.py::"
            "test_an_asyncio_waiter_cancelled_as_it_is_woken_passes_the_wake_up_on"
            "[another-process]",
        ),
    ),
    Mutant(
        "sync: an acquire that called a wake-up off and never took the lock owes nothing",
        SYNC,
        "                self._wakeups.gave_up(watched)\n",
        "                pass\n",
        (
            "tests/integration/test_take_back.py::"
            "test_a_release_that_left_the_waiter_asleep_wakes_it_when_the_worker_stops"
            "[sync-cut-short]",
        ),
    ),
    Mutant(
        "a release that freed nothing drops the wake-up its process owes",
        "src/quorumlock/_frontend.py",
        "    return all(o.reply is Reply.NOT_HELD for o in round_.outcomes)\n",
        "    return False\n",
        (
            "tests/integration/test_take_back.py::"
            "test_a_release_that_left_the_waiter_asleep_wakes_it_when_the_worker_stops"
            "[async-cut-short]",
        ),
    ),
    Mutant(
        "sync: a watch interrupted while it subscribes leaves its waiter registered",
        "src/quorumlock/_io/wakeups.py",
        "                _, dropped = dismiss(self._waiters, waiter)\n",
        "                dropped = []\n",
        (
            "tests/integration/test_wakeups.py::"
            "test_a_sync_waiter_interrupted_while_subscribing_unsubscribes",
        ),
    ),
    Mutant(
        "a wake-up handed on leaves the release's later announcements to the waiter gone",
        "src/quorumlock/_io/wakeups.py",
        "            woken[:] = [nxt if w is waiter else w for w in woken]\n",
        "            pass\n",
        (
            "tests/core/test_lingering.py::"
            "test_a_waiter_that_leaves_with_a_wake_up_it_never_tried_hands_it_on",
        ),
    ),
    Mutant(
        "a fencing token committed exactly at the validity's end counts",
        FLOWS,
        "if commit.finished < holds_until and fence_committed(",
        "if commit.finished <= holds_until and fence_committed(",
        (
            "tests/core/test_fencing.py::"
            "test_a_commit_confirmed_exactly_as_the_validity_ends_does_not_count",
        ),
    ),
    Mutant(
        "release() answers True with only a minority still holding the key",
        ALGO + "lockstate.py",
        "return round_.count(Reply.DONE) >= quorum(self.servers)",
        "return round_.count(Reply.DONE) >= quorum(self.servers) - 1",
        ("tests/core/test_lockstate.py",),
    ),
    Mutant(
        "locked() and owned() answer True for a minority",
        ALGO + "lockstate.py",
        "        if hits >= needed:\n",
        "        if hits >= needed - 1:\n",
        ("tests/core/test_lockstate.py",),
    ),
    Mutant(
        "a semaphore counts a grant of another slot for the slot it judges",
        ALGO + "semaphore.py",
        "(said is None or said[0] != slot)",
        "(said is None or said[0] == slot)",
        (
            "tests/core/test_semaphore_flow.py::test_only_the_grants_of_the_slot_itself_count_for_it",
        ),
    ),
    Mutant(
        "a semaphore's waiter subscribes again after every attempt",
        ALGO + "semaphore.py",
        "            watching = True\n",
        "            watching = False\n",
        (
            "tests/core/test_semaphore_flow.py::"
            "test_a_waiter_subscribes_once_and_then_waits_for_an_announcement",
        ),
    ),
    Mutant(
        "a semaphore's woken waiter never staggers more after a miss",
        ALGO + "semaphore.py",
        "            misses += 1\n",
        "            misses += 0\n",
        (
            "tests/core/test_semaphore_flow.py::"
            "test_a_woken_waiter_staggers_its_attempt_more_after_each_miss",
        ),
    ),
    Mutant(
        "a waiter that stood behind and was woken with every waiter staggers over a spread "
        "of no round it ran",
        FLOWS,
        "    elapsed = 0.0\n",
        "    elapsed = 1.0\n",
        (
            "tests/core/test_flows.py::"
            "test_a_process_standing_behind_then_woken_with_every_waiter_staggers_the_least",
        ),
    ),
    Mutant(
        "a waiter that polls spaces its polls out by a place in line it does not hold",
        FLOWS,
        "            if watching and queue:\n",
        "            if watching or queue:\n",
        (
            "tests/core/test_flows.py::"
            "test_a_waiter_that_polls_stands_in_no_line_whatever_its_replies_say",
        ),
    ),
    Mutant(
        "a requeue wake-up at the end of the pause joins and waits for nothing",
        FLOWS,
        "woken.now < now + pause:",
        "woken.now <= now + pause:",
        ("tests/core/test_flows.py::test_a_requeue_wake_up_at_the_end_of_the_pause_tries_again",),
    ),
    Mutant(
        "every waiter of a process polls for itself: none waits on behind the oldest",
        FLOWS,
        "    if config.retry_count is not None:\n        return 0.0\n",
        "    if True:\n        return 0.0\n",
        (
            "tests/core/test_flows.py::test_a_waiter_may_wait_on_past_its_pause_up_to_its_timeout",
            "tests/integration/test_wake_one.py::"
            "test_one_waiter_of_a_process_polls_for_all_of_its_waiters_of_the_name",
        ),
    ),
    Mutant(
        "a waiter with a retry count waits on behind the oldest, its retries unspent",
        FLOWS,
        "    if config.retry_count is not None:\n        return 0.0\n",
        "    if False:\n        return 0.0\n",
        ("tests/core/test_flows.py::test_a_waiter_may_wait_on_past_its_pause_up_to_its_timeout",),
    ),
    Mutant(
        "every waiter of a semaphore polls for itself",
        ALGO + "semaphore.py",
        "        woken = yield Wait(pause, wait_on(config, give_up_at, now + pause))\n",
        "        woken = yield Wait(pause)\n",
        (
            "tests/integration/test_wake_one.py::"
            "test_one_waiter_of_a_process_polls_for_all_of_its_waiters_of_the_name",
        ),
    ),
    Mutant(
        "every waiter of a name that never queues (a semaphore's, a read-write lock's) "
        "polls for itself",
        WAKEUPS,
        '    return f"one name: {waiter.kind}" if len(waiter.channels) == 1 else None\n',
        "    return None\n",
        (
            "tests/core/test_lingering.py::"
            "test_one_waiter_of_each_sort_polls_and_the_next_takes_over_as_it_leaves",
        ),
    ),
    Mutant(
        "a release that names no head wakes every waiter of the process",
        WAKEUPS,
        "            key = waiter if sort is None else sort\n",
        "            key = waiter\n",
        (
            "tests/core/test_lingering.py::"
            "test_an_announcement_with_no_head_wakes_the_first_of_each_sort_and_every_set",
        ),
    ),
    Mutant(
        "a read-write lock's writers and readers poll for each other",
        ALGO + "rwlock.py",
        "kind=self.mode.value)",
        'kind="")',
        ("tests/core/test_rwstate.py::test_each_mutex_step_becomes_the_read_write_one",),
    ),
    Mutant(
        "a semaphore's waiters of other permits poll for each other",
        ALGO + "semaphore.py",
        '            kind = f"{permits} permits"\n',
        '            kind = ""\n',
        (
            "tests/core/test_semaphore_flow.py::"
            "test_a_waiter_subscribes_once_and_then_waits_for_an_announcement",
        ),
    ),
    Mutant(
        "the next waiter is not told when the one that polled for it leaves",
        WAKEUPS,
        "            nxt.promote()\n",
        "            pass\n",
        (
            "tests/core/test_lingering.py::"
            "test_one_waiter_of_each_sort_polls_and_the_next_takes_over_as_it_leaves",
            "tests/integration/test_wake_one.py::"
            "test_the_next_waiter_of_a_process_polls_once_the_one_that_polled_gives_up",
        ),
    ),
    Mutant(
        "a set's waiter, on several names, waits on behind a semaphore's waiter",
        WAKEUPS,
        '    return f"one name: {waiter.kind}" if len(waiter.channels) == 1 else None\n',
        '    return f"one name: {waiter.kind}"\n',
        (
            "tests/core/test_lingering.py::"
            "test_one_waiter_of_each_sort_polls_and_the_next_takes_over_as_it_leaves",
        ),
    ),
    Mutant(
        "a read-write lock's writer waits on behind a reader or a semaphore's waiter "
        "(its intent, which only its own attempts renew, lapses)",
        WAKEUPS,
        '    return f"one name: {waiter.kind}" if len(waiter.channels) == 1 else None\n',
        '    return "one name" if len(waiter.channels) == 1 else None\n',
        (
            "tests/core/test_lingering.py::"
            "test_one_waiter_of_each_sort_polls_and_the_next_takes_over_as_it_leaves",
        ),
    ),
    Mutant(
        "a thread that waits on behind the oldest is not woken when its turn comes",
        WAKEUPS,
        "            turn.set()\n",
        "            pass\n",
        (
            "tests/core/test_lingering.py::"
            "test_one_waiter_of_each_sort_polls_and_the_next_takes_over_as_it_leaves",
        ),
    ),
    Mutant(
        "a task that waits on behind the oldest is not woken when its turn comes",
        "src/quorumlock/_io/async_wakeups.py",
        "            self._turn.set()\n",
        "            pass\n",
        (
            "tests/core/test_lingering.py::"
            "test_one_waiter_of_each_sort_polls_and_the_next_takes_over_as_it_leaves",
        ),
    ),
    Mutant(
        "a TLS connection lost during its set-up for any reason is a refusal of the "
        "certificate (fatal)",
        ERRORS,
        "        if isinstance(seen, ConnectionResetError):\n",
        "        if not isinstance(seen, ConnectionResetError):\n",
        (
            "tests/test_errors.py::"
            "test_a_tls_connection_closed_during_its_set_up_without_a_reset_is_retried",
        ),
    ),
    Mutant(
        "a wrong password is reported as a missing one",
        ERRORS,
        "isinstance(exc, rx.AuthenticationError) and detail",
        "isinstance(exc, rx.AuthenticationError) or detail",
        ("tests/test_errors.py::test_a_wrong_password_is_not_reported_as_a_missing_one",),
    ),
    Mutant(
        "a password that holds another known one is scrubbed after it, half shown",
        ERRORS,
        "key=len, reverse=True)",
        "key=len, reverse=False)",
        ("tests/test_errors.py::test_passwords_of_four_characters_or_more_are_scrubbed_whole",),
    ),
    Mutant(
        "CONFIG GET's RESP2 reply (redis-py before 8) is read as no setting: never durable",
        INCARNATION,
        "return dict(zip(items[::2], items[1::2], strict=False))",
        "return {}",
        ("tests/core/test_sessions.py::test_config_pairs_in_either_form",),
    ),
    Mutant(
        "a marker of another type is left to the scripts, whose WRONGTYPE blames the lock key",
        INCARNATION,
        "    if required and wrong_type(marker):",
        "    if not required and wrong_type(marker):",
        (
            "tests/core/test_sessions.py::"
            "test_a_marker_of_another_type_fails_where_the_session_is_needed",
        ),
    ),
    Mutant(
        "an INFO reply without a run_id gives a session with an empty one",
        INCARNATION,
        '        raise ValueError("the server\'s INFO reply has no run_id")\n',
        "        pass\n",
        ("tests/core/test_sessions.py::test_an_info_without_run_id_is_refused",),
    ),
    Mutant(
        "sync: a with block leaves held what its own thread acquired again in it",
        SYNC,
        "(token != self._state.token and self._occupant is not me):",
        "(token != self._state.token):",
        (
            "tests/integration/test_lock_objects.py::"
            "test_with_block_ends_the_acquisition_its_own_thread_made_in_it",
        ),
    ),
    Mutant(
        "asyncio: a with block leaves held what its own task acquired again in it",
        ASYNC,
        "if entered != self._state.token and self._occupant is not me:",
        "if entered != self._state.token:",
        (
            "tests/integration/test_lock_objects.py::"
            "test_with_block_ends_the_acquisition_its_own_thread_made_in_it",
        ),
    ),
    Mutant(
        "asyncio: a lease cancelled with its event loop while the lock is held ends silently",
        ASYNC,
        "                self._keeper is asyncio.current_task()\n                and self.held\n",
        "                False\n",
        (
            "tests/integration/test_event_loops.py::"
            "test_a_lease_taken_on_an_event_loop_that_ended_is_released_on_the_next",
        ),
    ),
    Mutant(
        "run: a signal while it releases after CMD ended turns CMD's status into 128+N",
        RUN_CLI,
        "        for signum in previous:\n            signal.signal(signum, _ignore)\n",
        "        for signum, old in previous.items():\n            signal.signal(signum, old)\n",
        ("tests/cli/test_run.py::test_a_signal_once_the_command_ended_keeps_its_status",),
    ),
    Mutant(
        "a lock name that is another kind of key is reported as the server's failure",
        ERRORS,
        "    if inner.startswith(_WRONGTYPE):\n",
        "    if False:\n",
        (
            "tests/integration/test_server_warnings.py::"
            "test_a_name_that_is_another_kind_of_key_on_a_server_is_no_server_failure",
        ),
    ),
    Mutant(
        "a read of who holds or leads counts one server listed twice",
        FLOWS,
        "COUNTING_OPS = ACQUIRE_OPS | READ_OPS\n",
        "COUNTING_OPS = ACQUIRE_OPS\n",
        (
            "tests/integration/test_same_server.py::"
            "test_a_read_of_one_server_under_two_names_is_refused",
        ),
    ),
    Mutant(
        "a family release answered NOSCRIPT after its round is not sent again",
        FLOWS,
        "RELEASE_OPS = frozenset({Op.RELEASE, Op.RW_RELEASE, Op.SEMAPHORE_RELEASE})\n",
        "RELEASE_OPS = frozenset({Op.RELEASE})\n",
        (
            "tests/integration/test_quorum.py::"
            "test_close_sends_again_a_release_that_a_late_noscript_left_unrun",
        ),
    ),
    Mutant(
        "a quarantine seen over once is never checked again, whatever ends it later",
        SCRIPTS,
        "since > 0 and max_ttl > 0 and since + max_ttl > over then",
        "since > 0 and max_ttl > 0 and over == 0 then",
        ("tests/integration/test_quarantine.py::test_a_quarantine_seen_over_is_not_checked_again",),
    ),
    Mutant(
        "a batch of renewals refused as a whole fails every renewal in it",
        FANOUT,
        "                    batch.redo.update(batch.each)\n                else:\n",
        "                    for k in batch.each:\n"
        "                        batch.machine(k).error(index, *translate(exc))\n"
        "                else:\n",
        (
            "tests/integration/test_batch.py::"
            "test_a_batch_call_refused_as_a_whole_renews_each_lock_alone",
        ),
    ),
    Mutant(
        "the extends of a batch each renew the key of the step after",
        SCRIPTS,
        '    local value = redis.pcall("get", KEYS[i])\n',
        '    local value = redis.pcall("get", KEYS[i % #KEYS + 1])\n',
        (
            "tests/integration/test_batch.py::"
            "test_the_renewals_of_a_batch_cost_each_server_one_script_call",
        ),
    ),
    Mutant(
        "a batch of renewals sends its call in the EVAL form every time",
        FANOUT,
        "                _EACH_LOADED.add(conn)\n",
        "                pass\n",
        (
            "tests/integration/test_batch.py::"
            "test_a_batch_after_a_server_lost_its_scripts_caches_the_script_again",
        ),
    ),
    Mutant(
        "a connection whose lost scripts all went again stays marked",
        FANOUT,
        "        if not unloaded:\n            # Nothing left",
        "        if False:\n            # Nothing left",
        (
            "tests/integration/test_quorum.py::"
            "test_a_connection_whose_script_went_again_is_not_marked_any_more",
        ),
    ),
    Mutant(
        "under eventlet, a socket's readiness wakes the greenthread after its wait ended",
        "src/quorumlock/_io/polling.py",
        "        if waiting:\n",
        "        if True:\n",
        (
            "tests/integration/test_greenlets.py::"
            "test_a_greenlet_that_ran_rounds_sleeps_in_full[eventlet]",
        ),
    ),
    Mutant(
        "each server's announcement of a release without a queue wakes another waiter",
        WAKEUPS,
        "        if space and notice in self.seen:\n",
        "        if named and notice in self.seen:\n",
        (
            "tests/core/test_lingering.py::"
            "test_a_release_with_no_head_announced_by_every_server_wakes_each_sort_once",
            "tests/integration/test_wake_one.py::"
            "test_a_release_without_a_queue_wakes_one_waiter_of_a_process_not_one_per_server",
        ),
    ),
    Mutant(
        "the read-write release announces no notice",
        SCRIPTS,
        '.. KEYS[1], " " .. (ARGV[4] or ARGV[1]))\n',
        '.. KEYS[1], "")\n',
        (
            "tests/integration/test_wakeups.py::"
            "test_the_servers_announce_a_release_without_a_queue_under_one_notice",
        ),
    ),
    Mutant(
        "a downgrade is announced under the notice of the release that follows it",
        ALGO + "wire.py",
        '        f"{step.token}:downgrade",\n',
        "        step.token,\n",
        (
            "tests/integration/test_wakeups.py::"
            "test_the_servers_announce_a_release_without_a_queue_under_one_notice",
        ),
    ),
    Mutant(
        "a read-write undo is announced under the notice of the hold's release",
        ALGO + "rwlock.py",
        '            arrival=step.arrival if op is Op.RW_RELEASE else "",\n',
        '            arrival="",\n',
        ("tests/core/test_rwstate.py::test_each_mutex_step_becomes_the_read_write_one",),
    ),
    Mutant(
        "a semaphore's strays are announced under the notice of the permit's release",
        ALGO + "semaphore.py",
        "notify=True, arrival=str(attempts), permits=permits",
        "notify=True, permits=permits",
        (
            "tests/core/test_semaphore_flow.py::"
            "test_a_grant_of_another_slot_is_taken_back_once_the_permit_is_held",
        ),
    ),
    Mutant(
        "a wake-up handed on goes to a waiter of another sort",
        WAKEUPS,
        "    same = [w for w in untold if (_sort(w) == sort if sort is not None else w.queued)]\n",
        "    same = [w for w in untold if w.queued]\n",
        (
            "tests/core/test_lingering.py::"
            "test_a_wake_up_handed_on_goes_to_the_next_waiter_of_the_same_sort",
        ),
    ),
    Mutant(
        "an asyncio connection given up forgets the releases it owed",
        ASYNC_FANOUT,
        "        self.orphans.add(round_.step for round_, _, _ in self.queue)\n",
        "",
        (
            "tests/integration/test_late_undo.py::test_a_late_undo_never_deletes_a_grant_of_a_later_attempt[async]",
        ),
    ),
    Mutant(
        "a sync connection closed forgets the releases it owed",
        FANOUT,
        "            orphans.add((step,))\n",
        "            pass\n",
        (
            "tests/integration/test_late_undo.py::test_a_late_undo_never_deletes_a_grant_of_a_later_attempt[sync]",
        ),
    ),
    Mutant(
        "an acquire goes where a release of its token was cut off",
        "src/quorumlock/_io/orphans.py",
        "    if not step.acquires:\n",
        "    if True:\n",
        (
            "tests/core/test_orphans.py::"
            "test_an_acquire_of_an_orphaned_token_is_withheld_there_only",
            "tests/integration/test_late_undo.py",
        ),
    ),
    Mutant(
        "the round sends to a server the transport withheld",
        ALGO + "round.py",
        "            if i in withheld:\n",
        "            if False:\n",
        (
            "tests/core/test_round.py::"
            "test_a_server_the_transport_withholds_gets_nothing_and_counts_as_failed",
        ),
    ),
    Mutant(
        "an asyncio connection whose replies wait for a busy loop is dropped as frozen",
        ASYNC_FANOUT,
        "        return not self.unread(default=False)\n",
        "        return True\n",
        (
            "tests/integration/test_late_undo.py::"
            "test_an_asyncio_connection_whose_server_answers_a_busy_loop_is_kept",
        ),
    ),
    Mutant(
        "a sync attempt goes to a server on any connection, its undo's reply still owed",
        FANOUT,
        "            held_back = self._in_order(taken, held_back)\n",
        "            pass\n",
        (
            "tests/integration/test_late_undo.py::"
            "test_a_sync_attempt_follows_its_undo_on_the_connection_that_owes_its_reply",
        ),
    ),
    Mutant(
        "a sync connection that owes a release's reply is not noted as owing it",
        FANOUT,
        "        owing.setdefault(step.token, []).append(ref(conn))\n",
        "        pass\n",
        (
            "tests/integration/test_late_undo.py::"
            "test_a_sync_attempt_follows_its_undo_on_the_connection_that_owes_its_reply",
        ),
    ),
    # The read-write set's bands of scores (docs/algorithm.md, "Read-write locks").
    Mutant(
        "an acquire leaves the expired holds of the kind it does not look at in the set",
        SCRIPTS,
        "rw_live(rw_aside, 1)  -- only to drop the expired holds of the kind not in our way",
        "-- (mutant)",
        (f"{RW_TESTS}::test_an_acquire_drops_the_expired_holds_of_every_kind",),
    ),
    Mutant(
        "a hold of ours past its expiry, still in the set, is extended as if it were live",
        SCRIPTS,
        "    return score and tonumber(score) - rw_base[kind] > rw_now",
        "    return score and true",
        (f"{RW_TESTS}::test_a_hold_whose_time_ran_out_on_the_servers_is_not_extended",),
    ),
    Mutant(
        "the read-write set gets no time to live: it outlives its holds forever",
        SCRIPTS,
        '    if redis.call("pttl", KEYS[1]) < ms then',
        "    if false then",
        (f"{RW_TESTS}::test_the_key_outlives_every_hold_and_goes_with_the_last",),
    ),
    # A semaphore's slots, read in one MGET.
    Mutant(
        "a semaphore's acquire leaves the slots its previous round got on a server",
        SCRIPTS,
        "    if values[i] == token then\n",
        "    if false then\n",
        (
            f"{SEMAPHORE_TESTS}::test_split_vote_is_settled_by_a_second_round_with_nothing_left_behind",
        ),
    ),
    Mutant(
        "a semaphore's release deletes no slot",
        SCRIPTS,
        "    if i ~= keep and values[i] == ARGV[1] then",
        "    if i ~= keep and values[i] == false then",
        (f"{SEMAPHORE_TESTS}::test_k_permits_then_refused",),
    ),
    Mutant(
        "status shows a read-write hold past its time (its score read as its expiry)",
        "src/quorumlock/cli/_status.py",
        "if rw_expiry(held, score) <= now_ms:",
        "if score <= now_ms:",
        ("tests/cli/test_run_rw.py::test_status_counts_the_live_holds_of_each_kind_only",),
    ),
    Mutant(
        "an asyncio command held to the end of a busy turn gets its timeout from the round's start",
        ASYNC_FANOUT,
        "            self.late[index] = held\n",
        "            pass\n",
        (
            "tests/integration/test_busy_loop.py::"
            "test_a_command_written_late_gives_its_server_its_timeout_from_the_write",
        ),
    ),
    Mutant(
        "an asyncio connection begun late gets its grace from the round's start",
        ASYNC_FANOUT,
        "            elif (since := self.nodes[i].connecting_since()) is not None:",
        "            elif (since := None) is not None:",
        (
            "tests/integration/test_busy_loop.py::"
            "test_a_connection_begun_late_gets_its_time_from_its_start",
        ),
    ),
    Mutant(
        "a stall of a process with many rounds under way makes a warning per round",
        "src/quorumlock/_observe.py",
        '    if not warn_due("clock anomaly", "", now):\n',
        "    if False:\n",
        (
            "tests/core/test_observe.py::"
            "test_the_rounds_of_one_stall_make_one_warning_and_the_next_counts_them",
        ),
    ),
)


def copy_tree(destination: Path) -> None:
    """The files git knows of (tracked and new, not ignored): no virtualenv, no caches."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = destination / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


class Starter:
    """One job's test starter (starter.py) for ``tree``: pytest and its plugins are
    imported once, and each run of tests is a fork of that process, which imports
    quorumlock and the tests afresh from ``tree``."""

    def __init__(self, tree: Path) -> None:
        self.tree = tree
        # No byte code written by the interpreter: a mutant and the next one of the same
        # file, the same size and within the same second, would share a stale .pyc. (The
        # suite's conftest caches quorumlock's and the tests' byte code itself, checked
        # against the source's hash at each import, which no mutant can fool.) The
        # asserts stay plain: a verdict needs no assert introspection.
        env = dict(os.environ, PYTHONPATH=str(tree / "src"), PYTHONDONTWRITEBYTECODE="1")
        self._process = subprocess.Popen(
            [sys.executable, str(STARTER), str(tree)],
            cwd=tree,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, tests: tuple[str, ...]) -> tuple[bool, str]:
        """True if the tests pass in the tree; and the last lines of pytest's output."""
        assert self._process.stdin is not None
        assert self._process.stdout is not None
        request = {"tests": list(tests), "timeout": TEST_TIMEOUT}
        self._process.stdin.write(json.dumps(request) + "\n")
        self._process.stdin.flush()
        line = self._process.stdout.readline()
        if not line:
            raise SystemExit(f"the test starter of {self.tree} ended: see its output above")
        answer = json.loads(line)
        if "error" in answer:
            raise SystemExit(answer["error"])
        if answer["code"] is None:
            return False, f"timed out after {TEST_TIMEOUT:.0f} s"
        lines = [line for line in answer["output"].strip().splitlines() if line.strip()]
        failed = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
        return answer["code"] == 0, "; ".join([*failed[:3], *lines[-1:]])

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        self._process.wait()


def run_mutant(starter: Starter, number: int, mutant: Mutant) -> tuple[bool, str]:
    """Apply ``mutant`` to the starter's tree, run its tests there, restore the file;
    whether it survived (its tests passed) and the line that reports it."""
    path = starter.tree / mutant.path
    original = path.read_text()
    found = original.count(mutant.before)
    if found != 1:
        return True, f"{number:2} ERROR: the snippet occurs {found} times in {mutant.path}"
    path.write_text(original.replace(mutant.before, mutant.after))
    started = time.monotonic()
    try:
        passed, tail = starter.run(mutant.tests)
    finally:
        path.write_text(original)
    verdict = "SURVIVED" if passed else "killed"
    took = time.monotonic() - started
    return passed, f"{number:2} {verdict:8} {mutant.path}: {mutant.why} ({took:.0f} s; {tail})"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("only", nargs="*", type=int, help="numbers of the mutants to run")
    parser.add_argument("--list", action="store_true", help="print the mutants and exit")
    parser.add_argument(
        "--no-baseline",
        action="store_true",
        help="skip the run of the named tests without any mutant (CI: they have just "
        "passed in the whole suite, on the same code)",
    )
    parser.add_argument(
        "--jobs",
        type=int,
        default=1,
        help="mutants tested at once, each in a copy of the tree of its own (default 1)",
    )
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs must be at least 1, not {args.jobs}")
    chosen = [(i, m) for i, m in enumerate(MUTANTS, 1) if not args.only or i in args.only]
    if args.list:
        for i, mutant in chosen:
            print(f"{i:2} {mutant.path}: {mutant.why}\n   tests: {', '.join(mutant.tests)}")
        return 0
    with contextlib.ExitStack() as stack:
        temp = stack.enter_context(tempfile.TemporaryDirectory(prefix="quorumlock-mutants-"))
        starters: queue.SimpleQueue[Starter] = queue.SimpleQueue()
        for job in range(min(args.jobs, len(chosen)) or 1):
            tree = Path(temp) / f"tree-{job}"
            copy_tree(tree)
            starter = Starter(tree)
            stack.callback(starter.close)
            starters.put(starter)
        baseline = tuple(dict.fromkeys(t for _, m in chosen for t in m.tests))
        starter = starters.get()
        passed, tail = (True, "") if args.no_baseline else starter.run(baseline)
        if not passed:
            # One more run tells a flaky test (named loudly, to be fixed) from a broken
            # baseline; a mutant's verdict is never retried.
            print(f"baseline: the named tests failed once without any mutant: {tail}")
            passed, tail = starter.run(baseline)
            if not passed:
                print(f"baseline: they fail again: {tail}")
                return 1
            print("baseline: WARNING: they passed on a second run: the failure above is flaky")
        starters.put(starter)

        def in_a_free_tree(number: int, mutant: Mutant) -> tuple[bool, str]:
            # each job takes a copy no other job is using, and gives it back after
            starter = starters.get()
            try:
                return run_mutant(starter, number, mutant)
            finally:
                starters.put(starter)

        survivors: list[str] = []
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            # in the list's order, each as soon as it and those before it are done
            for survived, line in pool.map(lambda chosen: in_a_free_tree(*chosen), chosen):
                if survived:
                    survivors.append(line)
                print(line, flush=True)
    # The survivors again, last: a log shown only by its end (CI's) names them.
    for line in survivors:
        print(line)
    print(f"{len(chosen) - len(survivors)} of {len(chosen)} mutants killed")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
