"""The suite's own rules (tests/conftest.py), each run in a pytest of its own: a copy of
the suite's conftest over a few tests made for the purpose."""

from __future__ import annotations

import importlib.util
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import write_byte_code

CONFTEST = Path(__file__).with_name("conftest.py")


def run_pytest(
    tmp_path: Path,
    files: dict[str, str],
    env: dict[str, str] | None = None,
    args: tuple[str, ...] = (),
    preexec_fn: Callable[[], object] | None = None,
) -> subprocess.CompletedProcess[str]:
    root = tmp_path / "tests"
    root.mkdir()
    shutil.copy(CONFTEST, root / "conftest.py")
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    environment = {k: v for k, v in os.environ.items() if k != "QUORUMLOCK_TEST_STRICT"}
    environment.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-ra", "-p", "no:cacheprovider", *args, "tests"],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        preexec_fn=preexec_fn,
    )


SKIPPING = {
    "test_gone.py": """
        import pytest

        @pytest.fixture
        def tool():
            pytest.skip("the tool is not installed")

        def test_a(tool): pass
        def test_b(tool): pass
    """,
    "area/test_mostly.py": """
        import pytest

        def test_c(): pytest.skip("no network")
        def test_d(): pytest.skip("no network")
        def test_e(): pass
    """,
    "test_fine.py": """
        import pytest

        def test_f(): pass
        def test_g(): pytest.skip("one test alone")
    """,
}


def _ignore_interrupts() -> None:
    """In a child before it runs pytest: what a shell without job control does to what
    it starts in the background (SIGINT), and ``nohup`` (SIGHUP)."""
    for signum in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_IGN)


def test_the_tests_and_what_they_start_do_not_ignore_interrupts(tmp_path: Path) -> None:
    """Started with SIGINT, SIGHUP and SIGTERM ignored, the tests get them back at their
    defaults, and so do the processes they start: a test that stops one as Ctrl-C does
    found it ignored (a CI job that ran the suite in the background)."""
    test = """
        import signal, subprocess, sys

        IGNORED = (
            "import signal; print([signal.getsignal(s) == signal.SIG_IGN"
            " for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM)])"
        )

        def test_here_and_in_a_child():
            assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
            child = subprocess.run(
                [sys.executable, "-c", IGNORED], capture_output=True, text=True, check=True
            )
            assert child.stdout.strip() == "[False, False, False]"
    """
    done = run_pytest(tmp_path, {"test_signals.py": test}, preexec_fn=_ignore_interrupts)
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_skipped_area_is_named_with_its_reason(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, SKIPPING)
    assert result.returncode == 0, result.stdout
    lines = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED AREA")]
    assert lines == [
        "SKIPPED AREA tests/area/: 2 of 3 tests skipped: no network (2)",
        "SKIPPED AREA tests/test_gone.py: 2 of 2 tests skipped: the tool is not installed (2)",
    ], result.stdout
    # after the short summary, right above the counts
    out = result.stdout.splitlines()
    section = next(i for i, line in enumerate(out) if "areas skipped" in line)
    assert section > next(i for i, line in enumerate(out) if "short test summary" in line)
    between = [line for line in out[section + 1 : -1] if line.strip()]
    assert between == lines, out[section:]


@pytest.mark.parametrize("args", [(), ("-n", "2")], ids=["one-process", "test-processes"])
def test_a_skipped_area_fails_a_strict_run(tmp_path: Path, args: tuple[str, ...]) -> None:
    """Also when the tests run in test processes (README's -n): the areas are counted
    over all their reports, once."""
    result = run_pytest(tmp_path, SKIPPING, {"QUORUMLOCK_TEST_STRICT": "1"}, args)
    assert result.returncode == 1, result.stdout
    assert "QUORUMLOCK_TEST_STRICT=1: a skipped area fails the run" in result.stdout
    lines = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED AREA")]
    assert lines == [
        "SKIPPED AREA tests/area/: 2 of 3 tests skipped: no network (2)",
        "SKIPPED AREA tests/test_gone.py: 2 of 2 tests skipped: the tool is not installed (2)",
    ], result.stdout


def test_a_single_skip_is_no_area(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, {"test_fine.py": SKIPPING["test_fine.py"]})
    assert result.returncode == 0, result.stdout
    assert "SKIPPED AREA" not in result.stdout


def test_an_xfail_must_name_its_exception(tmp_path: Path) -> None:
    bare = """
        import pytest

        @pytest.mark.xfail(reason="a known bug")
        def test_x(): raise KeyError
    """
    result = run_pytest(tmp_path, {"test_x.py": bare})
    assert result.returncode == 4, result.stdout + result.stderr
    assert "xfail without raises= or without a reason" in result.stderr
    assert "tests/test_x.py::test_x" in result.stderr


def test_an_xfail_must_give_a_reason(tmp_path: Path) -> None:
    bare = """
        import pytest

        @pytest.mark.xfail(raises=KeyError)
        def test_x(): raise KeyError
    """
    result = run_pytest(tmp_path, {"test_x.py": bare})
    assert result.returncode == 4, result.stdout + result.stderr


def test_a_precise_xfail_is_accepted_and_an_imperative_one_refused(tmp_path: Path) -> None:
    files = {
        "test_x.py": """
            import pytest

            @pytest.mark.xfail(raises=KeyError, reason="a known bug", strict=True)
            def test_x(): raise KeyError

            def test_y(): pytest.xfail("whatever")
        """
    }
    result = run_pytest(tmp_path, files)
    assert result.returncode == 1, result.stdout
    assert "1 failed, 1 xfailed" in result.stdout, result.stdout
    assert "imperative pytest.xfail()" in result.stdout


def test_the_run_starts_by_naming_the_servers(tmp_path: Path) -> None:
    result = run_pytest(tmp_path, {"test_f.py": "def test_f(): pass\n"})
    assert result.returncode == 0, result.stdout
    header = result.stdout.split("collected", 1)[0]
    assert "servers: main suite (core, integration, cli, compat, faults): Valkey " in header
    assert "  valkey: Valkey " in header
    assert "  redis-6.2: Redis 6.2." in header
    assert "  path: " in header


def test_the_byte_code_written_for_child_interpreters_follows_every_edit(
    tmp_path: Path,
) -> None:
    def value_in_a_child() -> str:
        read = [sys.executable, "-c", "import edited; print(edited.VALUE)"]
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
        done = subprocess.run(
            read, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60, check=True
        )
        return done.stdout

    module = tmp_path / "edited.py"
    module.write_text("VALUE = 1\n")
    assert write_byte_code(tmp_path) == 1
    cached = Path(importlib.util.cache_from_source(str(module)))
    assert cached.read_bytes()[4:8] == (3).to_bytes(4, "little")  # checked by hash
    assert write_byte_code(tmp_path) == 0  # up to date: nothing written again
    assert value_in_a_child() == "1\n"
    # the same size, within the same second: a timestamp-checked file would pass for it
    module.write_text("VALUE = 2\n")
    assert value_in_a_child() == "2\n"
    assert write_byte_code(tmp_path) == 1
    assert value_in_a_child() == "2\n"
