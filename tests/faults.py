"""A fault-injecting store for tests: a real home's ports, with a failure injected into a chosen
write's transaction through the ``VersionLog`` port (never by patching an adapter's insides).

    store = FaultyStore.open(path)
    memory = Memory(store, clock, embedder=HashingEmbedder())
    store.versions.fail_inside(lambda batch: bool(batch.graph), OSError("disk full"))

The failure is raised last inside the transaction, after the rows, the graph writes and the audit
rows went in: the store must roll all of it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from memory_core.adapters.duckdb import DuckDBHome
from memory_core.ports import StagedRows, Store, VersionLog, WriteBatch


@dataclass
class _Fault:
    when: Callable[[WriteBatch], bool]
    error: BaseException
    check: Callable[[], None] | None  # runs inside the transaction, before the failure


class FaultyVersions:
    """``VersionLog``: the real log, but a write matching a registered fault fails inside its
    transaction. Every other method is the real log's."""

    def __init__(self, inner: VersionLog) -> None:
        self._inner = inner
        self._faults: list[_Fault] = []
        self.failed: list[WriteBatch] = []

    def fail_inside(
        self, when: Callable[[WriteBatch], bool], error: BaseException, *, check: Callable[[], None] | None = None
    ) -> None:
        """Fail the next write for which ``when(batch)`` holds (once)."""
        self._faults.append(_Fault(when, error, check))

    def apply(
        self,
        batch: WriteBatch,
        *,
        snapshot: tuple[str, int] | None = None,
        before_commit: Callable[[], None] | None = None,
        staged: StagedRows | None = None,
    ) -> None:
        fault = next((f for f in self._faults if f.when(batch)), None)
        if fault is None:
            return self._inner.apply(batch, snapshot=snapshot, before_commit=before_commit, staged=staged)
        self._faults.remove(fault)

        def failing() -> None:
            if before_commit is not None:
                before_commit()
            if fault.check is not None:
                fault.check()
            self.failed.append(batch)
            raise fault.error

        return self._inner.apply(batch, snapshot=snapshot, before_commit=failing, staged=staged)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class FaultyStore:
    """``Store``: a real home's ports, its version log a ``FaultyVersions``. Every other port and
    method is the real store's."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner
        self.versions = FaultyVersions(inner.versions)

    @classmethod
    def open(cls, home: Path) -> FaultyStore:
        """The store of the DuckDB home at ``home`` (created if absent), faults injectable."""
        return cls(DuckDBHome.open(home))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


class Killed(Exception):
    """What a ``FailingCalls`` raises: the process died there (not a typed refusal)."""


class FailingCalls:
    """Any port: the real one, but the call of a named method after ``after`` calls of it raises
    ``Killed`` (a process killed midway: that call, and so everything after it, never happens).

        store.reflect = FailingCalls(store.inner.reflect, "save", after=3)
    """

    def __init__(self, inner: Any, method: str, *, after: int) -> None:
        self._inner, self._method, self.left = inner, method, after

    def __getattr__(self, name: str) -> Any:
        real = getattr(self._inner, name)
        if name != self._method:
            return real

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.left <= 0:
                raise Killed(f"killed at {name}")
            self.left -= 1
            return real(*args, **kwargs)

        return call
