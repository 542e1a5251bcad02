"""quorumlock: correct distributed locks over Redis and Valkey.

The Redlock algorithm over N independent masters, and the single-instance lock (N = 1)::

    from quorumlock import Redlock

    rl = Redlock(["redis://10.0.0.1:6379", "redis://10.0.0.2:6379", "redis://10.0.0.3:6379"])
    with rl.lock("orders:42", ttl=10.0, timeout=5.0) as lock:
        ...  # at most one holder at a time, for lock.validity more seconds

Everything public is importable from here; the modules behind it are private.
"""

from quorumlock._algorithm.config import RedlockConfig
from quorumlock._algorithm.election import Leader
from quorumlock._algorithm.handoff import LockHandle
from quorumlock._algorithm.outcomes import NodeOutcome, Reply
from quorumlock._election import Term
from quorumlock._exceptions import (
    ConfigurationError,
    FenceError,
    LockLost,
    LockNotAcquired,
    LockNotHeld,
    LockNotReentrant,
    LockUpgradeRefused,
    QuorumLockError,
    QuorumUnavailable,
    StaleFencingToken,
)
from quorumlock._fence import RedisFence
from quorumlock._frontend import QuorumLockWarning
from quorumlock._observe import (
    AcquireEvent,
    ExtendEvent,
    LockObserver,
    LostEvent,
    ReleaseEvent,
    RoundEvent,
)
from quorumlock._provision import Provisioned, provision
from quorumlock._sync import (
    Campaign,
    Election,
    Lock,
    MultiLock,
    Permit,
    ReadWriteHold,
    ReadWriteLock,
    Redlock,
    RLock,
)

__version__ = "0.1.0"

__all__ = [
    "AcquireEvent",
    "Campaign",
    "ConfigurationError",
    "Election",
    "ExtendEvent",
    "FenceError",
    "Leader",
    "Lock",
    "LockHandle",
    "LockLost",
    "LockNotAcquired",
    "LockNotHeld",
    "LockNotReentrant",
    "LockObserver",
    "LockUpgradeRefused",
    "LostEvent",
    "MultiLock",
    "NodeOutcome",
    "Permit",
    "Provisioned",
    "QuorumLockError",
    "QuorumLockWarning",
    "QuorumUnavailable",
    "RLock",
    "ReadWriteHold",
    "ReadWriteLock",
    "RedisFence",
    "Redlock",
    "RedlockConfig",
    "ReleaseEvent",
    "Reply",
    "RoundEvent",
    "StaleFencingToken",
    "Term",
    "__version__",
    "provision",
]
