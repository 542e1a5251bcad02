"""The whole benchmark suite (issue 6): ``python benchmarks/suite.py [--quick] [--write-docs]``.

The code lives in the package (``quorumlock.benchmarks.suite``); see docs/benchmarks.md.
"""

from quorumlock.benchmarks.suite import main

if __name__ == "__main__":
    raise SystemExit(main())
