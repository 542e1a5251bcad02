"""What a contended critical section costs: ``python benchmarks/chain.py``.

The code lives in the package (``quorumlock.benchmarks.chain``).
"""

from quorumlock.benchmarks.chain import main

if __name__ == "__main__":
    raise SystemExit(main())
