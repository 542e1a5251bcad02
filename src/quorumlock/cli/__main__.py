"""``python -m quorumlock.cli``: the same as the ``quorumlock`` command."""

import sys

from quorumlock.cli._app import main

sys.exit(main())
