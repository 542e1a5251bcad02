"""Uncontended acquire+release, side by side with the peers: ``python benchmarks/uncontended.py``.

The code lives in the package (``quorumlock.benchmarks.uncontended``) so that
``quorumlock bench`` runs it from an installed quorumlock; see its README.
"""

from quorumlock.benchmarks.uncontended import main

if __name__ == "__main__":
    raise SystemExit(main())
