"""Two versions of quorumlock in one process: ``python -m quorumlock.benchmarks.versions``.

A change of a few per cent to the uncontended cycle is smaller than what two runs of the
same code differ by on a noisy host (separate processes drift by several per cent
from one minute to the next). This compares two versions where that drift cancels out:
both are loaded into one process (each a copy of its package under a name of its own,
its imports of itself rewritten to that name), on the same 5 servers, and they take
turns: slices of ``--slice`` uncontended N = 5 cycles (a lock object,
``acquire(blocking=False)``, ``release()``, each version on a name of its own; with
``--asyncio``, the same cycle of ``quorumlock.asyncio.Redlock``, awaited on one event
loop), alternating which goes first, ``--pairs`` times. Reported: each version's median
time per cycle over its slices, and the median and quartiles of the ratio this version
/ the other within each pair (below 1: this version is faster); then the same for the
process's CPU time per cycle (its threads included, the servers' not): one process's
cycle hides much of its CPU time behind the servers' work, which many processes on one
name (the contended figures) do not.

The other version is ``--against REV``: a git revision of the clone this quorumlock is
installed from (``pip install -e``), or a directory that holds a ``quorumlock``
package (itself, or under ``src/``). ``--control`` compares this version with a second
copy of itself: what the method gives for no change at all. Numbers only: nothing here
is judged against a time. docs/benchmarks.md cites its numbers as "in one process".
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import re
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path
from types import ModuleType
from typing import Any, Final

import quorumlock
from quorumlock.benchmarks._common import bounded, local_servers

__all__ = ["VersionsResult", "load_copy", "main", "measure"]

SERVERS: Final = 5
TTL_SECONDS: Final = 10.0

#: ``import quorumlock...`` and ``from quorumlock... import``, at any indentation.
_IMPORT: Final = re.compile(r"^(\s*)(from|import) quorumlock(?=[.\s]|$)", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class VersionsResult:
    this: tuple[float, ...]  # us per cycle, one per slice, in pair order
    other: tuple[float, ...]
    label: str  # what the other version is
    api: str = "sync"  # or "asyncio"
    this_cpu: tuple[float, ...] = ()  # this process's CPU us per cycle, as ``this``
    other_cpu: tuple[float, ...] = ()

    @property
    def ratios(self) -> tuple[float, ...]:
        """This version's time per cycle / the other's, pair by pair."""
        return tuple(a / b for a, b in zip(self.this, self.other, strict=True))

    @property
    def cpu_ratios(self) -> tuple[float, ...]:
        """This version's CPU time per cycle / the other's, pair by pair."""
        return tuple(a / b for a, b in zip(self.this_cpu, self.other_cpu, strict=True))


class VersionError(Exception):
    """The other version could not be found or loaded (a one-line message)."""


def package_dir(root: Path) -> Path:
    """The ``quorumlock`` package in ``root`` (itself, or under ``src/``)."""
    for candidate in (root, root / "quorumlock", root / "src" / "quorumlock"):
        if (candidate / "__init__.py").is_file() and candidate.name == "quorumlock":
            return candidate
    raise VersionError(f"no quorumlock package in {root}")


def _checkout_root() -> Path:
    """The clone this quorumlock is installed from (``<root>/src/quorumlock``)."""
    root = Path(quorumlock.__file__).resolve().parents[2]
    if not (root / ".git").exists():
        raise VersionError(
            "--against REV needs quorumlock installed from a git clone (pip install -e); "
            "give a directory instead"
        )
    return root


def _extract_revision(rev: str, into: Path) -> Path:
    """``src/quorumlock`` at git revision ``rev`` of the clone, extracted into ``into``."""
    root = _checkout_root()
    try:
        done = subprocess.run(
            ["git", "-C", str(root), "archive", "--format=tar", rev, "src/quorumlock"],
            capture_output=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise VersionError(f"git archive {rev}: {exc}") from None
    if done.returncode != 0:
        message = done.stderr.decode(errors="replace").strip().splitlines()
        raise VersionError(f"git archive {rev}: {message[-1] if message else 'failed'}")
    with tarfile.open(fileobj=BytesIO(done.stdout)) as archive:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            archive.extractall(into, filter="data")
        else:  # our own clone's archive, plain files
            archive.extractall(into)
    return into / "src" / "quorumlock"


def load_copy(source: Path, name: str, into: Path) -> ModuleType:
    """Copy the package ``source`` to ``into/name``, its imports of ``quorumlock``
    rewritten to ``name``, and import it."""
    target = into / name
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for path in target.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        path.write_text(_IMPORT.sub(rf"\1\2 {name}", text), encoding="utf-8")
    if str(into) not in sys.path:
        sys.path.insert(0, str(into))
    importlib.invalidate_caches()
    try:
        module = importlib.import_module(name)
        redlock = importlib.import_module(module.Redlock.__module__)
    except Exception as exc:  # an old revision this interpreter cannot load
        raise VersionError(f"the copy of {source} does not import: {exc}") from None
    if not str(redlock.__file__).startswith(str(target)):
        raise VersionError(f"the copy of {source} imported another quorumlock")
    return module


@contextmanager
def _versions(against: str | None) -> Iterator[tuple[ModuleType, ModuleType, str]]:
    """This version and the other one, each loaded as a copy; and what the other is."""
    here = Path(quorumlock.__file__).resolve().parent
    with tempfile.TemporaryDirectory(prefix="quorumlock-versions-") as temp:
        tree = Path(temp)
        tag = uuid.uuid4().hex[:8]
        if against is None:
            source, label = here, "a second copy of this version (control)"
        elif Path(against).is_dir():
            source, label = package_dir(Path(against)), f"the package in {against}"
        else:
            source, label = _extract_revision(against, tree / "rev"), f"git revision {against}"
        copies = tree / "copies"
        try:
            this = load_copy(here, f"_quorumlock_this_{tag}", copies)
            other = load_copy(source, f"_quorumlock_other_{tag}", copies)
            yield this, other, label
        finally:  # loaded or not, nothing of the copies stays
            for name in list(filter(lambda m: m.split(".")[0].endswith(tag), sys.modules)):
                del sys.modules[name]
            if str(copies) in sys.path:
                sys.path.remove(str(copies))


def _refused(name: str) -> VersionError:
    return VersionError(f"{name!r} was not granted: is another client using it?")


def _slices(redlock: Any, name: str) -> Callable[[int], None]:
    """Run ``n`` cycles of ``redlock`` (a sync one) on ``name``."""

    def run(n: int) -> None:
        for _ in range(n):
            lock = redlock.lock(name, ttl=TTL_SECONDS)
            if not lock.acquire(blocking=False):
                raise _refused(name)
            lock.release()

    return run


def _async_slices(
    redlock: Any, name: str, loop: asyncio.AbstractEventLoop
) -> Callable[[int], None]:
    """Run ``n`` cycles of ``redlock`` (an asyncio one) on ``name``, on ``loop``."""

    async def cycles(n: int) -> None:
        for _ in range(n):
            lock = redlock.lock(name, ttl=TTL_SECONDS)
            if not await lock.acquire(blocking=False):
                raise _refused(name)
            await lock.release()

    def run(n: int) -> None:
        loop.run_until_complete(cycles(n))

    return run


def measure(
    urls: Sequence[str],
    against: str | None,
    *,
    pairs: int,
    slice_cycles: int,
    warmup: int,
    api: str = "sync",
) -> VersionsResult:
    """Alternate slices of the two versions' cycles on ``urls`` (see the module's doc);
    ``api`` "sync" or "asyncio"."""
    loop = asyncio.new_event_loop() if api == "asyncio" else None
    try:
        with _versions(against) as (this, other, label):
            name = f"quorumlock-bench:versions:{uuid.uuid4().hex[:8]}"
            if loop is None:
                redlocks = (this.Redlock(list(urls)), other.Redlock(list(urls)))
                runs = tuple(_slices(r, f"{name}:{i}") for i, r in enumerate(redlocks))
            else:
                kinds = tuple(
                    importlib.import_module(f"{v.__name__}.asyncio").Redlock for v in (this, other)
                )
                redlocks = tuple(kind(list(urls)) for kind in kinds)
                runs = tuple(_async_slices(r, f"{name}:{i}", loop) for i, r in enumerate(redlocks))
            try:
                times = _alternate(runs, pairs=pairs, slice_cycles=slice_cycles, warmup=warmup)
            finally:
                for redlock in redlocks:
                    if loop is None:
                        redlock.close()
                    else:
                        loop.run_until_complete(redlock.close())
    finally:
        if loop is not None:
            loop.close()
    wall, cpu = times
    return VersionsResult(tuple(wall[0]), tuple(wall[1]), label, api, tuple(cpu[0]), tuple(cpu[1]))


_Times = tuple[list[float], list[float]]


def _alternate(
    runs: tuple[Callable[[int], None], ...], *, pairs: int, slice_cycles: int, warmup: int
) -> tuple[_Times, _Times]:
    """Each version's wall and CPU time per cycle (us) in each pair of slices, the first
    to go alternating from pair to pair."""
    for run in runs:
        run(warmup)
    times: _Times = ([], [])
    cpu: _Times = ([], [])
    enabled = gc.isenabled()
    gc.disable()  # a collection lands in one slice, not in the other
    try:
        for pair in range(pairs):
            for index in (0, 1) if pair % 2 == 0 else (1, 0):
                began, used = time.perf_counter(), time.process_time()
                runs[index](slice_cycles)
                spent = time.perf_counter() - began
                times[index].append(spent / slice_cycles * 1e6)
                cpu[index].append((time.process_time() - used) / slice_cycles * 1e6)
            gc.collect()
    finally:
        if enabled:
            gc.enable()
    return times, cpu


def render(result: VersionsResult) -> str:
    lines = [
        f"uncontended N = {SERVERS} cycle ({result.api}), {len(result.ratios)} pairs of "
        f"slices; the other version: {result.label}"
    ]
    for what, this, other, ratios in (
        ("wall time", result.this, result.other, result.ratios),
        ("CPU time (this process)", result.this_cpu, result.other_cpu, result.cpu_ratios),
    ):
        if not ratios:
            continue
        ordered = sorted(ratios)
        quartiles = statistics.quantiles(ordered, n=4) if len(ordered) >= 2 else ordered * 3
        lines += [
            f"{what}:",
            f"  this version:  median {statistics.median(this):.1f} us per cycle",
            f"  other version: median {statistics.median(other):.1f} us per cycle",
            f"  this / other, pair by pair: median {statistics.median(ordered):.3f}x "
            f"(quartiles {quartiles[0]:.3f}x-{quartiles[2]:.3f}x)",
        ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m quorumlock.benchmarks.versions",
        description="Two versions of quorumlock in one process, taking turns on the "
        "uncontended N = 5 cycle: this one against --against REV (or itself: --control).",
    )
    other = parser.add_mutually_exclusive_group(required=True)
    other.add_argument(
        "--against", metavar="REV",
        help="a git revision of the clone quorumlock is installed from, or a directory "
        "holding a quorumlock package",
    )  # fmt: skip
    other.add_argument(
        "--control", action="store_true", help="this version against a copy of itself"
    )
    parser.add_argument("--servers", help="5 comma-separated URLs (default: local)")
    parser.add_argument(
        "--asyncio", action="store_true", help="the cycle of quorumlock.asyncio.Redlock"
    )
    parser.add_argument(
        "--pairs", type=lambda t: bounded(t, int, 1000), default=30,
        help="pairs of slices (default 30)",
    )  # fmt: skip
    parser.add_argument(
        "--slice", type=lambda t: bounded(t, int, 100_000), default=500,
        help="cycles per slice (default 500)",
    )  # fmt: skip
    parser.add_argument(
        "--warmup", type=lambda t: bounded(t, int, 100_000, zero=True), default=1000,
        help="cycles of each version before the first slice (default 1000)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    with local_servers(args.servers, SERVERS) as (urls, _):
        if len(urls) != SERVERS:
            parser.error(f"--servers needs {SERVERS} URLs, not {len(urls)}")
        try:
            result = measure(
                urls,
                None if args.control else args.against,
                pairs=args.pairs,
                slice_cycles=args.slice,
                warmup=args.warmup,
                api="asyncio" if args.asyncio else "sync",
            )
        except VersionError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        except Exception as exc:
            # a version's own error (a server down, a bad URL): one line, as ours are
            if not type(exc).__module__.startswith("_quorumlock_"):
                raise
            print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
