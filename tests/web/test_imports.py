"""The web integrations import their framework only when their own module is imported."""

from __future__ import annotations

import inspect
import subprocess
import sys

import pytest

from quorumlock import Redlock
from quorumlock._integration import redlock_option_names

FRAMEWORKS = ("django", "fastapi", "starlette")
CORE = (
    "quorumlock",
    "quorumlock.asyncio",
    "quorumlock.otel",
    "quorumlock.testing",
    "quorumlock.cli",
    "quorumlock.cli._app",
    "quorumlock._integration",
)


def imported_after(modules: tuple[str, ...]) -> set[str]:
    code = (
        "import importlib, sys\n"
        f"for name in {list(modules)!r}: importlib.import_module(name)\n"
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    return set(done.stdout.split())


def test_the_core_imports_no_framework() -> None:
    assert imported_after(CORE).isdisjoint(FRAMEWORKS)


@pytest.mark.parametrize(
    ("module", "expected", "not_expected"),
    [
        ("quorumlock.fastapi", {"starlette"}, {"django", "fastapi"}),
        ("quorumlock.django", {"django"}, {"starlette", "fastapi"}),
    ],
)
def test_each_integration_imports_only_its_framework(
    module: str, expected: set[str], not_expected: set[str]
) -> None:
    found = imported_after((module,))
    assert expected <= found
    assert found.isdisjoint(not_expected)


def test_the_integrations_know_every_redlock_option() -> None:
    keywords = {
        p.name
        for p in inspect.signature(Redlock.__init__).parameters.values()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    }
    assert redlock_option_names() == keywords
