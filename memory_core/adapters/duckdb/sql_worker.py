"""The SQL memory worker: a child process holding one memory home's per-scope DuckDB connections.

``SqlMemory`` starts it as a script (``python -I -B sql_worker.py READ_FD WRITE_FD DUCKDB_DIR``)
and talks to it over two pipes. It imports nothing from memory_core: it starts in a tenth of a
second and shares no state with the parent. Why a process: DuckDB checks an interrupt between
vectors, not inside one function call, and big string and list allocations bypass its buffer
manager, so one ``repeat('x', 2000000000)`` ran for 20 s and took 4 GB in the caller's process.
Here each statement runs under a data-segment limit (``RLIMIT_DATA``: the process's current size
plus the headroom the parent gives, 2x ``memory_limit``), so such an allocation fails at once; and
a statement still running at the time limit is interrupted here and, if it does not stop, the
parent kills this process: its transaction dies uncommitted with it.

Everything sent back (rows, column names, error messages) has the host paths it knows scrubbed.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import signal
import sys
import threading
import zoneinfo
from collections import OrderedDict
from multiprocessing.connection import Connection
from typing import Any

if __name__ == "__main__" and len(sys.argv) > 3:
    sys.path.insert(0, sys.argv[3])  # the parent's duckdb: -I leaves PYTHONPATH out
import duckdb  # noqa: E402

try:
    import resource
except ImportError:  # pragma: no cover - not POSIX: no data-segment limit, the kill still holds
    resource = None  # type: ignore[assignment]

PLACEHOLDER = "<host-path>"
# Generic system folders are no secret and common in data; scrubbing them would only mangle values.
GENERIC_DIRS = frozenset({"/", "/tmp", "/var/tmp", "/usr", "/usr/local", "/opt", "/var", "/home"})
# An absolute path as a setting's whole value or as an item of its list value ("[/a, /b]").
_SETTING_PATH = re.compile(r"(?:^|\[|,\s*)(/[^,\]]+)")


class Scrubber:
    """Replace each known host path (and anything below it) in strings, bytes and nested values."""

    def __init__(self, paths: set[str] | frozenset[str] = frozenset()) -> None:
        self.paths: set[str] = set()
        self._text: re.Pattern[str] | None = None
        self._bytes: re.Pattern[bytes] | None = None
        self.add(paths)

    def add(self, paths: Any) -> None:
        fresh = {p.rstrip("/") for p in paths if p and p.startswith("/")} - GENERIC_DIRS - {""}
        if fresh <= self.paths:
            return
        self.paths |= fresh
        # Longest first, so a path is replaced whole rather than by its parent; (?![\w-]) keeps
        # /rootfs from matching /root while /root/x and "/root." still do.
        alternatives = "|".join(re.escape(p) for p in sorted(self.paths, key=len, reverse=True))
        self._text = re.compile(f"(?:{alternatives})(?![\\w-])")
        self._bytes = re.compile(self._text.pattern.encode("utf-8"))

    def __call__(self, value: Any) -> Any:
        if self._text is None or self._bytes is None:
            return value
        if isinstance(value, str):
            return self._text.sub(PLACEHOLDER, value)
        if isinstance(value, bytes):
            return self._bytes.sub(PLACEHOLDER.encode(), value)
        if isinstance(value, tuple):
            return tuple(self(v) for v in value)
        if isinstance(value, list):
            return [self(v) for v in value]
        if isinstance(value, dict):
            return {self(k): self(v) for k, v in value.items()}
        return value


def size_of(value: Any) -> int:
    """About how many bytes a value takes on the wire: the unit of ``max_result_bytes``."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, (bytes, bytearray)):
        return len(value)
    if isinstance(value, (list, tuple)):
        return 8 + sum(size_of(v) for v in value)
    if isinstance(value, dict):
        return 8 + sum(size_of(k) + size_of(v) for k, v in value.items())
    return 8 if value is None or isinstance(value, (bool, int, float)) else 32


def fetch(cursor: Any, max_rows: int, max_bytes: int) -> tuple[list[tuple[Any, ...]], bool]:
    """Rows up to both caps, cut at a row boundary; the flag says whether anything was left out."""
    rows: list[tuple[Any, ...]] = []
    used = 0
    average = 64
    while True:
        # Small batches while rows are big: never pull much more into Python than will be kept.
        batch = max(1, min(1024, max_rows - len(rows) + 1, (max_bytes - used) // average + 1))
        chunk = cursor.fetchmany(batch)
        if not chunk:
            return rows, False
        for row in chunk:
            size = size_of(row)
            if len(rows) >= max_rows or used + size > max_bytes:
                return rows, True
            rows.append(row)
            used += size
        average = max(1, used // max(1, len(rows)))


def _data_bytes() -> int:
    """The data segment's size now (Linux); 0 where /proc does not say, and then no cap is set."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux: the time limit's kill still holds
        pass
    return 0


_INHERITED = resource.getrlimit(resource.RLIMIT_DATA) if resource is not None else None


def _cap(limit: int | None) -> None:
    """Set the data-segment limit for one statement (never above what this process inherited), or
    put the inherited one back (``None``)."""
    if _INHERITED is None or limit == 0:  # pragma: no cover - not POSIX, or no size to start from
        return
    soft, hard = _INHERITED
    if limit is not None:
        soft = limit if soft == resource.RLIM_INFINITY else min(limit, soft)
    resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


class Watchdog:
    """One thread that interrupts the running statement at its deadline (the gentle stop)."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._target: Any = None
        self._timeout = 0.0
        self.fired = False
        threading.Thread(target=self._loop, daemon=True, name="sql-watchdog").start()

    def arm(self, con: Any, timeout_s: float) -> None:
        with self._cond:
            self._target, self._timeout, self.fired = con, timeout_s, False
            self._cond.notify()

    def disarm(self) -> bool:
        with self._cond:  # once this returns, no interrupt can land on the next statement
            self._target = None
            self._cond.notify()
            return self.fired

    def _loop(self) -> None:
        with self._cond:
            while True:
                while self._target is None:
                    self._cond.wait()
                target = self._target
                if not self._cond.wait_for(lambda t=target: self._target is not t, timeout=self._timeout):
                    target.interrupt()
                    self.fired = True
                    self._target = None


class Worker:
    def __init__(self, *, root: str, read_only: bool, config: dict[str, Any], headroom: int, host_paths: list[str]):
        self.root, self.read_only, self.config, self.headroom = root, read_only, config, headroom
        self.connections: OrderedDict[str, Any] = OrderedDict()
        self.scrub = Scrubber({*host_paths, root, os.path.realpath(root), os.getcwd()})
        self.watchdog = Watchdog()
        self.engine_paths_known = False

    def connection(self, name: str, max_open: int) -> Any:
        con = self.connections.get(name)
        if con is not None:
            self.connections.move_to_end(name)
            return con
        con = duckdb.connect(os.path.join(self.root, name), read_only=self.read_only, config=self.config)
        if not self.engine_paths_known:
            # The paths the engine reports (secret, temp, extension folders) join the scrub list; once
            # is enough: they differ between databases only below the SQL root, scrubbed already.
            settings = con.execute(
                "SELECT value FROM duckdb_settings() WHERE name LIKE '%director%' OR name LIKE '%path%'"
            ).fetchall()
            self.scrub.add(p.strip() for (value,) in settings for p in _SETTING_PATH.findall(str(value)))
            self.engine_paths_known = True
        self.connections[name] = con
        while len(self.connections) > max_open:
            self.connections.popitem(last=False)[1].close()
        return con

    def run(self, name: str, statement: str, params: Any, query_only: bool, limits: dict[str, Any]) -> tuple[Any, ...]:
        try:
            con = self.connection(name, limits["max_open"])
        except duckdb.Error as exc:
            return ("failed", self.message(exc))
        self.watchdog.arm(con, limits["timeout_s"])
        base = _data_bytes()
        _cap(base + self.headroom if base else 0)  # after the watchdog and the connection: baseline
        try:
            con.execute("BEGIN TRANSACTION")
            cursor = con.execute(statement, params) if params else con.execute(statement)
            columns = tuple(d[0] for d in cursor.description) if cursor.description else ()
            rows, truncated = fetch(cursor, limits["max_rows"], limits["max_result_bytes"]) if columns else ([], False)
        except BaseException as exc:  # noqa: BLE001 - every failure is reported, typed, by the parent
            _cap(None)
            self.watchdog.disarm()
            self._rollback(name, con)
            return self._failure(exc)
        _cap(None)
        if self.watchdog.disarm():  # the interrupt landed as the statement finished: still a timeout
            self._rollback(name, con)
            return ("timeout",)
        try:
            con.execute("ROLLBACK" if query_only else "COMMIT")
        except duckdb.Error as exc:
            self._rollback(name, con)
            return self._failure(exc)
        return ("ok", self.scrub(columns), self.scrub(rows), truncated)

    def _rollback(self, name: str, con: Any) -> None:
        try:
            con.execute("ROLLBACK")
        except duckdb.Error:  # a connection that cannot roll back is closed: the next call reopens it
            self.connections.pop(name, None)
            con.close()

    def message(self, exc: BaseException) -> str:
        text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return self.scrub(text)

    def _failure(self, exc: BaseException) -> tuple[str, ...]:
        if isinstance(exc, duckdb.InterruptException):
            return ("timeout",)
        if isinstance(exc, (duckdb.OutOfMemoryException, MemoryError)):
            return ("memory", self.message(exc) if str(exc) else "out of memory")
        message = self.message(exc)
        if isinstance(exc, duckdb.PermissionException) or "configuration" in message.lower():
            return ("refused", message)
        return ("failed", message)

    def close(self) -> None:
        for con in self.connections.values():
            con.close()
        self.connections.clear()


class _Replies(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        # A zone pickles by key (the parent's allow-list takes ZoneInfo(key)), not through getattr.
        if isinstance(obj, zoneinfo.ZoneInfo) and obj.key:
            return zoneinfo.ZoneInfo, (obj.key,)
        return NotImplemented


def dumps(reply: Any) -> bytes:
    buffer = io.BytesIO()
    _Replies(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(reply)
    return buffer.getvalue()


_ACK = pickle.dumps(("ack",))


def main(argv: list[str]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles ^C and then stops this process
    if resource is not None:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core dump of a scope's data
    inbox = Connection(int(argv[1]), writable=False)
    outbox = Connection(int(argv[2]), readable=False)
    worker = Worker(**pickle.loads(inbox.recv_bytes()))
    outbox.send_bytes(dumps(("ready", os.getpid())))
    try:
        while True:
            try:
                request = pickle.loads(inbox.recv_bytes())
            except EOFError:  # the parent is gone
                break
            if request[0] == "close":
                break
            outbox.send_bytes(_ACK)  # taken: from here a death is the statement's, not an idle one
            try:
                reply: Any = ("ok", len(worker.connections)) if request[0] == "stats" else worker.run(*request[1:])
            except Exception as exc:  # noqa: BLE001 - a bug here must be an answer, not a dead worker
                reply = ("failed", worker.message(exc))
            try:
                payload = dumps(reply)
            except MemoryError:  # pragma: no cover - the result is capped well below the headroom
                payload = dumps(("memory", "the result did not fit in memory"))
            outbox.send_bytes(payload)
    finally:
        worker.close()


if __name__ == "__main__":
    main(sys.argv)
