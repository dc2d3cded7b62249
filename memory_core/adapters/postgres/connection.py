"""The connections to a PostgreSQL authority, shared by every port class over it: the pool, the
write lock, transactions, and plain reads.

Several processes (service replicas, workers) write one database, so the one lock a DuckDB home
takes in its process becomes a lock the database holds: ``WriteLock`` is a session advisory lock
(``pg_advisory_lock``) taken by the outermost holder in a process, on a connection pinned to that
thread until it lets go. Every write that appends to the log or the audit chain runs under it, so
sequence numbers are handed out in commit order: a transaction that took seq N has committed
before the next holder reads the highest seq (the lock is released only after the commit). A
reader that tails the log from a watermark therefore never skips a slow transaction.

Statements are written with ``?`` placeholders, as the DuckDB adapter writes them; ``sql``
turns them into psycopg's ``%s`` (and escapes a literal ``%``). Never use PostgreSQL's jsonb
``?`` operators here (``jsonb_exists`` says the same).
"""

from __future__ import annotations

import re
import threading
from contextlib import contextmanager
from functools import lru_cache
from typing import Any, Iterator, Sequence

import psycopg
from psycopg_pool import ConnectionPool

from ...ports.waiting import refuse_waiting

# The advisory lock keys of this schema's writers (two int4 keys: the schema's oid and a purpose),
# so two schemas in one database never wait for each other.
WRITE_LOCK = 1
MIGRATE_LOCK = 2

_SCHEMA_NAME = re.compile(r"^[a-z_][a-z0-9_]{0,62}$")


@lru_cache(maxsize=4096)
def sql(statement: str, with_params: bool = True) -> str:
    """A ``?``-placeholder statement as psycopg takes it."""
    if not with_params:
        return statement
    return statement.replace("%", "%%").replace("?", "%s")


def check_schema_name(name: str) -> str:
    if not _SCHEMA_NAME.match(name):
        raise ValueError(f"schema name {name!r} must be lower-case letters, digits and underscores")
    return name


class Tx:
    """One transaction on one connection: what a port's write runs its statements on."""

    def __init__(self, con: psycopg.Connection) -> None:
        self.con = con

    def execute(self, statement: str, params: Sequence[Any] = ()) -> psycopg.Cursor:
        return self.con.execute(sql(statement, bool(params)), list(params) if params else None)

    def executemany(self, statement: str, rows: Sequence[Sequence[Any]]) -> None:
        with self.con.cursor() as cur:
            cur.executemany(sql(statement), [list(r) for r in rows])


class WriteLock:
    """The authority's write lock: re-entrant in a thread, exclusive across threads (a process
    lock) and across processes (a session advisory lock on a connection pinned to the holder)."""

    def __init__(self, db: "PgConnection") -> None:
        self._db = db
        self._process = threading.RLock()
        self._depth = 0
        self._held: Any = None  # the pool's context of the pinned connection

    def __enter__(self) -> "WriteLock":
        refuse_waiting("the database's write lock")
        self._process.acquire()
        if self._depth == 0:
            try:
                self._take()
            except BaseException:
                self._process.release()
                raise
        self._depth += 1
        return self

    def _take(self) -> None:
        # A thread already in a transaction locks on its own connection (its statements stay in
        # that transaction); otherwise on one from the pool, pinned to the thread until let go.
        outer = self._db._pinned()
        held = self._db.pool.connection() if outer is None else None
        con = outer if held is None else held.__enter__()
        try:
            con.execute("SELECT pg_advisory_lock(%s, %s)", [self._db.schema_key, WRITE_LOCK])
        except BaseException as exc:
            if held is not None:
                held.__exit__(type(exc), exc, exc.__traceback__)
            raise
        self._held = (held, con, outer)
        self._db._pin(con)

    def __exit__(self, *exc: Any) -> None:
        self._depth -= 1
        try:
            if self._depth == 0:
                (held, con, outer), self._held = self._held, None
                self._db._local.con = outer
                try:
                    if not con.closed:
                        con.execute("SELECT pg_advisory_unlock(%s, %s)", [self._db.schema_key, WRITE_LOCK])
                except psycopg.Error:
                    con.close()  # (an aborted transaction refuses the unlock) its session's end lets go
                finally:
                    if held is not None:
                        held.__exit__(None, None, None)  # a broken connection is discarded by the pool
        finally:
            self._process.release()

    @property
    def held_here(self) -> bool:
        """Does the calling thread hold the lock?"""
        return self._depth > 0 and self._db._pinned() is not None


class PgConnection:
    """A pool of autocommit connections to one schema of one database (``search_path`` and the
    UTC time zone set when each connection starts)."""

    def __init__(self, conninfo: str, schema: str, *, read_only: bool = False, max_size: int = 16) -> None:
        self.schema = check_schema_name(schema)
        self.read_only = read_only
        self.pool = ConnectionPool(
            conninfo,
            min_size=1,
            max_size=max_size,
            kwargs={"autocommit": True, "options": f"-c search_path={schema} -c timezone=UTC"},
            name=f"memcore-{schema}",
            open=False,
        )
        self.pool.open(wait=True, timeout=10.0)
        self._local = threading.local()
        self.lock = WriteLock(self)
        self.schema_key = 0  # set by ``keyed`` once the schema exists

    def keyed(self) -> None:
        """Key the advisory locks by the schema's oid (after the schema is created)."""
        found = self.one("SELECT oid::int4 FROM pg_namespace WHERE nspname = ?", [self.schema])
        self.schema_key = int(found)

    # -- which connection a statement runs on --------------------------------------------------

    def _pin(self, con: psycopg.Connection) -> None:
        self._local.con = con

    def _pinned(self) -> psycopg.Connection | None:
        return getattr(self._local, "con", None)

    @contextmanager
    def connection(self) -> Iterator[psycopg.Connection]:
        """The calling thread's pinned connection (under the write lock or in a transaction), or
        one from the pool for this call."""
        refuse_waiting("the database")
        pinned = self._pinned()
        if pinned is not None:
            yield pinned
            return
        with self.pool.connection() as con:
            yield con

    @contextmanager
    def tx(self) -> Iterator[Tx]:
        """A transaction (a savepoint inside one already open on this thread). Statements the
        thread runs meanwhile, through ``rows`` and the like, run inside it."""
        with self.connection() as con:
            outer = self._pinned()
            self._pin(con)
            try:
                with con.transaction():
                    yield Tx(con)
            finally:
                self._local.con = outer

    # -- plain reads ---------------------------------------------------------------------------

    def rows(self, statement: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        with self.connection() as con:
            cur = con.execute(sql(statement, bool(params)), list(params) if params else None)
            return cur.fetchall() if cur.description is not None else []

    def dicts(self, statement: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        with self.connection() as con:
            cur = con.execute(sql(statement, bool(params)), list(params) if params else None)
            if cur.description is None:
                return []
            names = [d.name for d in cur.description]
            return [dict(zip(names, r)) for r in cur.fetchall()]

    def one(self, statement: str, params: Sequence[Any] = ()) -> Any:
        return self.rows(statement, params)[0][0]

    def meta(self, name: str) -> str | None:
        """A value of the ``meta`` table (schema version, watermarks, markers)."""
        found = self.rows("SELECT value FROM meta WHERE name = ?", [name])
        return found[0][0] if found else None

    @staticmethod
    def set_meta(tx: Tx, name: str, value: str) -> None:
        """Set a ``meta`` value inside the caller's transaction."""
        tx.execute(
            "INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            [name, value],
        )

    def close(self) -> None:
        self.pool.close()
