"""Side-by-side benchmarks of quorumlock and the other Python locks (see README.md here).

``suite`` runs the whole suite (``python -m quorumlock.benchmarks.suite``, or
``quorumlock bench --suite``; results in docs/benchmarks.md); ``uncontended`` backs
``quorumlock bench``; ``asyncio_cycles`` runs as ``python -m
quorumlock.benchmarks.asyncio_cycles``. Peers (pottery, python-redis-lock, aioredlock) are
imported only if installed, and matplotlib only to draw plots: ``pip install
'quorumlock[bench]'``.
"""

from typing import Final

__all__ = ["FIGURES"]

#: The suite's figures, in its order (``--only`` takes a comma-separated choice). Here,
#: not in ``suite``, for ``quorumlock bench --help``: the command line imports the
#: benchmarks only to run one.
FIGURES: Final = ("uncontended", "handover", "contention", "many", "asyncio")
