"""One DuckDB connection to a home's store, shared by every port class over it: the lock, the
transaction, and plain reads.

DuckDB admits one writer process per file, so the adapter is the home's only writer while it is
open. Every statement runs under one re-entrant lock: a thread's read-decide-commit sequence
(``VersionLog.locked``) and another thread's statements never interleave on the connection.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Generic, Iterator, Sequence, TypeVar

import duckdb

from ...identity import Namespace, Scope
from ...ports.waiting import ReadLock, StoreLock

NS_WHERE = "tenant = ? AND scope = ? AND owner_id = ?"


def ns_params(ns: Namespace) -> list[Any]:
    return [ns.tenant, ns.scope.value, ns.owner_id]


def ns_of(tenant: str, scope: str, owner_id: str) -> Namespace:
    """The namespace of a row's (tenant, scope, owner_id) columns."""
    return Namespace(tenant, Scope(scope), owner_id)


class DuckDBConnection:
    def __init__(self, con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
        self.con = con
        self.path = path
        self.read_only = read_only
        self.lock = StoreLock("the home's store")

    @contextmanager
    def tx(self) -> Iterator[duckdb.DuckDBPyConnection]:
        with self.lock:
            self.con.execute("BEGIN TRANSACTION")
            try:
                yield self.con
            except BaseException:
                self.con.execute("ROLLBACK")
                raise
            self.con.execute("COMMIT")

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.lock:
            return self.con.execute(sql, list(params)).fetchall()

    def dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.lock:
            cursor = self.con.execute(sql, list(params))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, r)) for r in cursor.fetchall()]

    def one(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.rows(sql, params)[0][0]

    def meta(self, name: str) -> str | None:
        """A value of the ``meta`` table (schema version, watermarks, markers)."""
        found = self.rows("SELECT value FROM meta WHERE name = ?", [name])
        return found[0][0] if found else None

    @staticmethod
    def set_meta(con: duckdb.DuckDBPyConnection, name: str, value: str) -> None:
        """Set a ``meta`` value inside the caller's transaction."""
        con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [name, value])

    def rewrite(self) -> None:
        """Copy every table and view into a fresh file and put it in this one's place: DuckDB
        keeps a deleted row's bytes in freed blocks, and a rewritten file holds live rows only.
        One thread, so each table's rows keep their order (the audit chain reads by rowid). A
        run killed before the swap leaves the old file whole; the next rewrite starts afresh."""
        fresh = self.path.with_name(self.path.name + ".rewrite")
        with self.lock:
            fresh.unlink(missing_ok=True)
            self.con.execute("CHECKPOINT")
            name = self.con.execute("SELECT current_database()").fetchall()[0][0]
            threads = self.con.execute("SELECT current_setting('threads')").fetchall()[0][0]
            self.con.execute("SET threads = 1")
            try:
                self.con.execute("ATTACH ? AS memcore_rewrite", [str(fresh)])
                self.con.execute(f'COPY FROM DATABASE "{name}" TO memcore_rewrite')
                self.con.execute("DETACH memcore_rewrite")
            finally:
                self.con.execute(f"SET threads = {int(threads)}")
            self.con.close()
            os.replace(fresh, self.path)
            self.con = duckdb.connect(str(self.path))
            self.con.execute("SET TimeZone = 'UTC'")

    def close(self) -> None:
        # Under the lock: a thread mid-statement (a served home's background worker) finishes
        # first; closing under it fails with "connection is busy" and leaves the file open.
        with self.lock:
            self.con.close()


T = TypeVar("T")


class StoreCache(Generic[T]):
    """A value loaded from the store once and kept until a write of what it summarizes drops it
    (this process is the home's only writer). Read under a lock of its own, so a reader never
    waits behind a write holding the store's; loaded and dropped under both, the store's first
    (the order writers take them in), so no write lands between a load's query and its fill."""

    def __init__(self, db: DuckDBConnection, load: Callable[[], T]) -> None:
        self._db, self._load = db, load
        self._value: T | None = None
        self._lock = ReadLock("a value cached from the store")

    def get(self) -> T:
        with self._lock:
            value = self._value
        if value is None:
            with self._db.lock, self._lock:
                if self._value is None:
                    self._value = self._load()
                value = self._value
        return value

    def drop(self) -> None:
        with self._db.lock, self._lock:
            self._value = None
