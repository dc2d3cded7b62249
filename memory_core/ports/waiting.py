"""Reads that must not wait, and the locks that honour them.

The memory service answers a point read on its event loop when the answer is already in memory:
handing a get to a worker thread and back cost more than the get itself (docs/benchmarks.md, "A
get answered on the event loop"). Such a read runs under ``without_waiting()``. Inside it a lock
another thread holds, or any statement to a store, raises ``WouldWait`` instead of waiting, and the
caller runs the op again where waiting is allowed. Only an op that changes nothing is run this
way, so stopping it part way leaves nothing behind.

The adapters take these locks where a served read could otherwise block: ``ReadLock`` around
in-memory state held briefly, ``StoreLock`` around a store's statements (never taken under
``without_waiting``: holding it means a statement is coming).
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Iterator

_NO_WAIT: ContextVar[bool] = ContextVar("memory_core_no_wait", default=False)


class WouldWait(BaseException):
    """Raised under ``without_waiting`` where the op would have waited: on a lock another thread
    holds, or on a store. A ``BaseException``, so that an adapter's ``except Exception`` cannot
    take it for a failure of its own and answer something else."""


@contextmanager
def without_waiting() -> Iterator[None]:
    """Run the block so that anything it would wait on raises ``WouldWait`` instead."""
    token = _NO_WAIT.set(True)
    try:
        yield
    finally:
        _NO_WAIT.reset(token)


def refuse_waiting(what: str) -> None:
    """Raise ``WouldWait`` under ``without_waiting``: the caller is about to wait on ``what``."""
    if _NO_WAIT.get():
        raise WouldWait(what)


class _Lock:
    """A lock named for the ``WouldWait`` it raises; let go as any lock."""

    __slots__ = ("_lock", "_what")

    def __init__(self, lock: Any, what: str) -> None:
        self._lock = lock
        self._what = what

    def __exit__(self, *exc: Any) -> None:
        self._lock.release()


class ReadLock(_Lock):
    """A mutex around in-memory state, held briefly. Under ``without_waiting`` it is taken only
    when free."""

    __slots__ = ()

    def __init__(self, what: str) -> None:
        super().__init__(threading.Lock(), what)

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            refuse_waiting(self._what)
            self._lock.acquire()


class StoreLock(_Lock):
    """A re-entrant lock around a store's statements. Under ``without_waiting`` it is never taken:
    a statement costs milliseconds and may wait behind a write."""

    __slots__ = ()

    def __init__(self, what: str) -> None:
        super().__init__(threading.RLock(), what)

    def __enter__(self) -> None:
        refuse_waiting(self._what)
        self._lock.acquire()
