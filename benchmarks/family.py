"""rlock and lock_many next to a plain lock: ``python benchmarks/family.py``.

The code lives in the package (``quorumlock.benchmarks.family``).
"""

from quorumlock.benchmarks.family import main

if __name__ == "__main__":
    raise SystemExit(main())
