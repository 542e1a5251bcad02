"""asyncio cycles, side by side with the peers: ``python benchmarks/asyncio_cycles.py``.

The code lives in the package (``quorumlock.benchmarks.asyncio_cycles``); see its README.
"""

from quorumlock.benchmarks.asyncio_cycles import main

if __name__ == "__main__":
    raise SystemExit(main())
