"""What one uncontended cycle's commands cost a server, part by part:
``python benchmarks/server_cost.py``.

The code lives in the package (``quorumlock.benchmarks.server_cost``).
"""

from quorumlock.benchmarks.server_cost import main

if __name__ == "__main__":
    raise SystemExit(main())
