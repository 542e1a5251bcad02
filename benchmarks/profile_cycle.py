"""Where one uncontended N = 5 cycle's time goes: ``python benchmarks/profile_cycle.py``.

The code lives in the package (``quorumlock.benchmarks.profile_cycle``).
"""

from quorumlock.benchmarks.profile_cycle import main

if __name__ == "__main__":
    raise SystemExit(main())
