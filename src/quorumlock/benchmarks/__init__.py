"""Side-by-side benchmarks of quorumlock and the other Python locks (see README.md here).

``uncontended`` backs ``quorumlock bench``; ``asyncio_cycles`` runs as
``python -m quorumlock.benchmarks.asyncio_cycles``. Peers (pottery, python-redis-lock,
aioredlock) are imported only if installed: ``pip install 'quorumlock[bench]'``.
"""
