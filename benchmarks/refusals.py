"""What a refused acquire costs: ``python benchmarks/refusals.py``.

The code lives in the package (``quorumlock.benchmarks.refusals``).
"""

from quorumlock.benchmarks.refusals import main

if __name__ == "__main__":
    raise SystemExit(main())
