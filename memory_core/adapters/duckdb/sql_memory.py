"""SQL memory: one sandboxed DuckDB database per scope, under ``<home>/sql/``.

A scope's database is opened with external access off (no files, no network, no ATTACH, no COPY
to or from files, no extension install or load), its configuration locked (no SET or PRAGMA
change), a memory limit and one thread. Each call runs one statement in its own transaction:
refused, failed or stopped at the time limit, it changes nothing. A statement type that has no
business in memory (ATTACH, COPY, LOAD, SET, PRAGMA, transaction control, EXPORT, ...) is refused
before it reaches the engine, and the engine's own sandbox refuses what gets past that.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import duckdb

from ...errors import InvalidInput, SqlFailed, SqlRefused, SqlTimeout
from ...identity import Namespace
from ...ports import SqlResult

EXEC_TYPES = frozenset(
    {
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "CREATE",
        "DROP",
        "ALTER",
        "EXPLAIN",
        "MERGE_INTO",
        "ANALYZE",
        "CREATE_FUNC",
    }
)
QUERY_TYPES = frozenset({"SELECT", "EXPLAIN"})
__all__ = ["SqlFailed", "SqlLimits", "SqlMemory", "SqlRefused", "SqlResult", "SqlTimeout"]


@dataclass(frozen=True, slots=True)
class SqlLimits:
    timeout_s: float = 10.0
    memory_limit: str = "512MB"
    max_open: int = 16  # databases kept open at once (least recently used closed first)
    max_rows: int = 10_000


def _sandbox_config(limits: SqlLimits) -> dict[str, Any]:
    return {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "memory_limit": limits.memory_limit,
        "threads": 1,
        "max_temp_directory_size": "0B",
        "lock_configuration": True,
    }


class SqlMemory:
    """The per-scope SQL databases of one memory home."""

    def __init__(self, root: Path, limits: SqlLimits | None = None, *, read_only: bool = False) -> None:
        self.root = Path(root)
        self.limits = limits or SqlLimits()
        self.read_only = read_only
        # The most recently used databases stay open; each open one holds its own buffer pool.
        self._connections: OrderedDict[Namespace, duckdb.DuckDBPyConnection] = OrderedDict()
        self._lock = threading.Lock()

    def path_for(self, namespace: Namespace) -> Path:
        # A digest, not the names: an owner id can never steer the path.
        digest = hashlib.sha256(
            json.dumps([namespace.tenant, namespace.scope.value, namespace.owner_id]).encode()
        ).hexdigest()[:32]
        return self.root / f"{namespace.scope.value}-{digest}.duckdb"

    def _connection(self, namespace: Namespace) -> duckdb.DuckDBPyConnection | None:
        con = self._connections.get(namespace)
        if con is not None:
            self._connections.move_to_end(namespace)
            return con
        path = self.path_for(namespace)
        if self.read_only and not path.exists():
            return None
        path.parent.mkdir(parents=True, exist_ok=True)
        con = duckdb.connect(str(path), read_only=self.read_only, config=_sandbox_config(self.limits))
        self._connections[namespace] = con
        while len(self._connections) > self.limits.max_open:
            _, oldest = self._connections.popitem(last=False)
            oldest.close()
        return con

    @staticmethod
    def _statement_type(statement: str) -> str:
        if not isinstance(statement, str) or not statement.strip():
            raise InvalidInput("statement must be a non-empty SQL string", field="statement")
        try:
            parsed = duckdb.extract_statements(statement)
        except duckdb.Error as exc:
            raise SqlFailed(f"the statement does not parse: {str(exc).splitlines()[0]}") from None
        if len(parsed) != 1:
            raise InvalidInput(f"one statement per call; got {len(parsed)}", field="statement")
        return parsed[0].type.name

    def run(
        self,
        namespace: Namespace,
        statement: str,
        params: Sequence[Any] | dict[str, Any] | None = None,
        *,
        query_only: bool,
    ) -> SqlResult:
        kind = self._statement_type(statement)
        allowed = QUERY_TYPES if query_only else EXEC_TYPES
        if kind not in allowed:
            what = (
                "sql_query reads only (SELECT, EXPLAIN)"
                if query_only and kind in EXEC_TYPES
                else "SQL memory allows tables and queries only (no ATTACH, COPY, LOAD, INSTALL, SET, PRAGMA, "
                "EXPORT, CALL or transaction control)"
            )
            raise SqlRefused(f"{kind} statements are refused: {what}", statement_type=kind)
        if self.read_only and not query_only:
            raise SqlRefused("this memory home is open read-only", statement_type=kind)
        with self._lock:
            con = self._connection(namespace)
            if con is None:  # read-only and the scope never wrote: an empty database
                raise SqlFailed("this scope has no SQL memory yet")
            return self._run(con, statement, params, kind, query_only)

    def _run(
        self, con: duckdb.DuckDBPyConnection, statement: str, params: Any, kind: str, query_only: bool
    ) -> SqlResult:
        timer = threading.Timer(self.limits.timeout_s, con.interrupt)
        timer.start()
        con.execute("BEGIN TRANSACTION")
        try:
            cursor = con.execute(statement, params) if params else con.execute(statement)
            columns = tuple(d[0] for d in cursor.description) if cursor.description else ()
            rows = cursor.fetchmany(self.limits.max_rows + 1) if columns else []
        except duckdb.InterruptException:
            con.execute("ROLLBACK")
            raise SqlTimeout(
                f"the statement ran past the {self.limits.timeout_s:g} s limit and was stopped; nothing was changed"
            ) from None
        except (duckdb.PermissionException, duckdb.OutOfMemoryException) as exc:
            con.execute("ROLLBACK")
            raise SqlRefused(f"refused by the sandbox: {str(exc).splitlines()[0]}") from None
        except duckdb.Error as exc:
            con.execute("ROLLBACK")
            message = str(exc).splitlines()[0]
            if "configuration" in message.lower():
                raise SqlRefused(f"refused by the sandbox: {message}") from None
            raise SqlFailed(message) from None
        finally:
            timer.cancel()
        con.execute("ROLLBACK" if query_only else "COMMIT")
        truncated = len(rows) > self.limits.max_rows
        return SqlResult(columns, tuple(tuple(r) for r in rows[: self.limits.max_rows]), truncated, kind)

    def close(self) -> None:
        with self._lock:
            for con in self._connections.values():
                con.close()
            self._connections.clear()
