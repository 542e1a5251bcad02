"""The mutation check's runner (tests/mutation/run.py): run two jobs at once, it still
reports every mutant, in the list's order, and fails on a survivor."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

RUNNER = Path(__file__).parent / "mutation" / "run.py"


def load_runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("quorumlock_mutation_runner", RUNNER)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    return module


def test_two_jobs_report_every_mutant_in_order_and_fail_on_a_survivor(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    runner = load_runner()
    arith = runner.ARITH
    mutants = (
        runner.Mutant(
            "a majority is n // 2",
            arith,
            "return n // 2 + 1",
            "return n // 2",
            ("tests/core/test_arithmetic.py::test_quorum_is_a_strict_majority",),
        ),
        runner.Mutant(
            "a comment only: its test passes",
            arith,
            "QUEUE_BACKOFF_MAX = 3\n",
            "QUEUE_BACKOFF_MAX = 3  # changed\n",
            ("tests/core/test_flows.py::test_a_waiter_far_back_in_line_polls_less_often",),
        ),
        runner.Mutant(
            "a snippet that is not there",
            arith,
            "no such line in the file",
            "",
            ("tests/core/test_arithmetic.py::test_quorum_is_a_strict_majority",),
        ),
    )
    monkeypatch.setattr(runner, "MUTANTS", mutants)

    assert runner.main(["--no-baseline", "--jobs", "2"]) == 1

    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines[:3]] == [
        ["1", "killed"],
        ["2", "SURVIVED"],
        ["3", "ERROR:"],
    ]
    # the ones not killed again, last: a log shown by its end names them
    assert lines[3:-1] == lines[1:3]
    assert lines[-1] == "1 of 3 mutants killed"


def test_jobs_must_be_at_least_one(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        load_runner().main(["--jobs", "0", "--list"])
    assert exited.value.code == 2
    assert "--jobs must be at least 1, not 0" in capsys.readouterr().err


def test_every_mutant_names_a_snippet_that_occurs_once_and_tests_that_exist() -> None:
    """Every mutant of the list still applies: its snippet occurs exactly once in its
    file, and each test it names is a test file, or a test function of one, that
    exists. A change to the code a mutant names fails here, in the test command, rather
    than in CI's mutation step (which reported such a mutant as an error)."""
    runner = load_runner()
    root = RUNNER.parents[2]
    for number, mutant in enumerate(runner.MUTANTS, 1):
        text = (root / mutant.path).read_text()
        assert text.count(mutant.before) == 1, f"mutant {number}: {mutant.why}"
        for test in mutant.tests:
            path, _, node = test.partition("::")
            assert (root / path).is_file(), f"mutant {number}: no {path}"
            if node:
                function = node.partition("[")[0]
                assert f"def {function}(" in (root / path).read_text(), (
                    f"mutant {number}: no {function} in {path}"
                )


def test_a_run_that_imports_quorumlock_from_elsewhere_gives_no_verdict(tmp_path: Path) -> None:
    """A tree without its own quorumlock (here: none at all) would test the worktree's
    instead of the mutant: the starter refuses to report a verdict."""
    runner = load_runner()
    starter = runner.Starter(tmp_path)
    try:
        with pytest.raises(SystemExit, match=f"not from {tmp_path}"):
            starter.run(("tests/core/test_arithmetic.py",))
    finally:
        starter.close()


def test_a_run_past_its_timeout_is_killed_and_says_so() -> None:
    """The starter kills a run that outlasts its timeout (a mutant that hangs its
    tests) and answers null, which the runner reports as a timeout (a kill)."""
    root = RUNNER.parents[2]
    starter = subprocess.run(
        [sys.executable, str(RUNNER.with_name("starter.py")), str(root)],
        input=json.dumps({"tests": ["tests/core/test_arithmetic.py"], "timeout": 0.01}) + "\n",
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert json.loads(starter.stdout)["code"] is None
