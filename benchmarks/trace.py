"""Where a hand-over's time goes: ``python benchmarks/trace.py``.

The code lives in the package (``quorumlock.benchmarks.trace``).
"""

from quorumlock.benchmarks.trace import main

if __name__ == "__main__":
    raise SystemExit(main())
