"""The algorithm imports neither redis nor asyncio and never reads a clock."""

from __future__ import annotations

import ast
from pathlib import Path

import quorumlock._algorithm

ALGORITHM = Path(quorumlock._algorithm.__file__).parent
FORBIDDEN_MODULES = {
    "redis",
    "asyncio",
    "socket",
    "select",
    "time",
    "threading",
    "datetime.datetime",
}
FORBIDDEN_CALLS = {"monotonic", "time", "perf_counter", "now", "sleep"}


def _modules() -> list[Path]:
    return sorted(ALGORITHM.glob("*.py"))


def test_algorithm_modules_exist() -> None:
    names = {p.stem for p in _modules()}
    assert {"arithmetic", "config", "flows", "lockstate", "outcomes", "scripts"} <= names


def test_no_io_imports_and_no_clock_reads() -> None:
    for path in _modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    assert alias.name.split(".")[0] not in FORBIDDEN_MODULES, (path, alias.name)
            elif isinstance(node, ast.ImportFrom):
                assert (node.module or "").split(".")[0] not in FORBIDDEN_MODULES, (
                    path,
                    node.module,
                )
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in {"time", "datetime", "loop"}
            ):
                assert node.attr not in FORBIDDEN_CALLS, (path, node.attr)
