"""The public API as a type checker sees it: ``tests/core/typed_usage.py`` is user code
whose types ``mypy --strict`` must accept as they are stated there."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path
from typing import Final

import pytest

REPO_ROOT: Final = Path(__file__).resolve().parents[2]
USAGE: Final = Path(__file__).with_name("typed_usage.py")


def mypy(path: Path) -> subprocess.CompletedProcess[str]:
    """mypy --strict on one file, with the project's settings (run from the root), on
    this tree's ``src`` whatever copy of quorumlock is installed."""
    env = {**os.environ, "MYPYPATH": str(REPO_ROOT / "src")}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--warn-unused-ignores", str(path)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )


@pytest.fixture(scope="module")
def have_mypy() -> None:
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (lint extra); .ci/run's lint step runs this test")


@pytest.mark.usefixtures("have_mypy")
def test_typed_user_code_gets_the_stated_types(tmp_path: Path) -> None:
    """Every ``assert_type`` and ``type: ignore`` of the usage file holds; the same file
    with one stated type wrong fails, or the check proves nothing."""
    checked = mypy(USAGE)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    source = USAGE.read_text()
    wrong = source.replace("assert_type(permit.slot, int | None)", "assert_type(permit.slot, str)")
    assert wrong != source
    broken = tmp_path / "typed_usage.py"
    broken.write_text(wrong)
    failed = mypy(broken)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "[assert-type]" in failed.stdout
