"""SQL memory: one sandboxed DuckDB database per scope, under ``<home>/sql/``.

A scope's database is opened with external access off (no files, no network, no ATTACH, no COPY
to or from files, no extension install or load), its configuration locked (no SET or PRAGMA
change), a memory limit and one thread. Each call runs one statement in its own transaction:
refused, failed or stopped at the time limit, it changes nothing. Before a statement reaches the
engine, ``sql_guard`` checks its type, the names it calls and its parameters; the engine's own
sandbox refuses what gets past that.

The engine runs in a worker process (``sql_worker``, one per ``SqlMemory``, holding the open
databases), because two limits cannot be kept inside the caller's process: DuckDB does not check
an interrupt inside one huge function call, and string and list allocations escape its memory
limit. The worker runs each statement under a data-segment limit and is killed if a statement
outlives the time limit; a killed statement's transaction never committed, so nothing changed,
and the next call starts a fresh worker.
"""

from __future__ import annotations

import io
import os
import pickle
import re
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from dataclasses import asdict, dataclass
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Sequence

import duckdb

from ...errors import SqlFailed, SqlRefused, SqlTimeout
from ...identity import Namespace
from ...ports import SqlResult
from .sql_guard import EXEC_TYPES, QUERY_TYPES, REFUSED_TYPES, checked
from .sql_owners import SqlOwners

__all__ = [
    "EXEC_TYPES",
    "QUERY_TYPES",
    "REFUSED_TYPES",
    "SqlFailed",
    "SqlLimits",
    "SqlMemory",
    "SqlRefused",
    "SqlResult",
    "SqlTimeout",
]

_WORKER = Path(__file__).with_name("sql_worker.py")
_UNITS = {"": 1, "B": 1, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12, "KIB": 2**10, "MIB": 2**20}
_UNITS |= {"GIB": 2**30, "TIB": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([KMGT]I?B|B)?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """DuckDB's size syntax ('512MB' = 512*10**6, '1GiB' = 2**30) as bytes."""
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"not a size: {text!r} (expected e.g. '512MB' or '1GiB')")
    return int(float(match.group(1)) * _UNITS[(match.group(2) or "").upper()])


@dataclass(frozen=True, slots=True)
class SqlLimits:
    timeout_s: float = 10.0  # the statement is interrupted here and its worker killed by 1.25x
    memory_limit: str = "512MB"  # DuckDB's buffer pool; the worker may grow by twice this per statement
    max_open: int = 16  # databases kept open at once (least recently used closed first)
    max_rows: int = 10_000
    max_result_bytes: int = 8 * 2**20  # a result is cut at a row boundary past this (truncated=True)

    def __post_init__(self) -> None:
        parse_size(self.memory_limit)
        if not self.timeout_s > 0 or min(self.max_open, self.max_rows, self.max_result_bytes) < 1:
            raise ValueError("SqlLimits: timeout_s, max_open, max_rows and max_result_bytes must be positive")

    @property
    def kill_after_s(self) -> float:
        # Past the gentle interrupt, a short grace before the hard stop: well inside 2x timeout_s.
        return self.timeout_s + min(max(0.25 * self.timeout_s, 0.2), 5.0)

    @property
    def headroom_bytes(self) -> int:
        return 2 * parse_size(self.memory_limit)


def sandbox_config(limits: SqlLimits) -> dict[str, Any]:
    return {
        "enable_external_access": False,
        "autoinstall_known_extensions": False,
        "autoload_known_extensions": False,
        "allow_community_extensions": False,
        "python_enable_replacements": False,  # no table name resolves to a Python object
        "memory_limit": limits.memory_limit,
        "threads": 1,
        "max_temp_directory_size": "0B",
        "lock_configuration": True,
    }


def host_paths(root: Path) -> list[str]:
    """The paths a result must never show: the SQL root and the memory home above it, the working
    folder, the user's home, the temp folder, Python's prefix (the worker adds what DuckDB reports)."""
    found = {str(root.absolute()), os.path.realpath(root), str(root.absolute().parent), os.getcwd()}
    found.add(os.path.expanduser("~"))
    found |= {os.environ.get("HOME", ""), tempfile.gettempdir(), sys.prefix, sys.exec_prefix, sys.base_prefix}
    return sorted(p for p in found if p)


class _Replies(pickle.Unpickler):
    """Only the value types DuckDB returns come back from the worker: nothing else is built."""

    SAFE = frozenset(
        {
            ("datetime", "date"),
            ("datetime", "datetime"),
            ("datetime", "time"),
            ("datetime", "timedelta"),
            ("datetime", "timezone"),
            ("decimal", "Decimal"),
            ("uuid", "UUID"),
            ("zoneinfo", "ZoneInfo"),
        }
    )

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in self.SAFE:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"the SQL worker sent a {module}.{name}")


class _Gone(Exception):
    """The worker process ended while a statement ran (killed for memory, or crashed)."""


class _Unstarted(Exception):
    """The worker process had ended before it took the request: the statement never ran."""


class _Worker:
    """The parent's end of one worker process."""

    def __init__(self, root: Path, limits: SqlLimits, read_only: bool) -> None:
        self.limits = limits
        self.owner_pid = os.getpid()
        root = root.absolute()  # the worker runs in root: a relative root would be taken twice
        child_in, parent_out = os.pipe()
        parent_in, child_out = os.pipe()
        # A clean environment: the engine sees no real home (HOME is the SQL root) and no secrets.
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LD_LIBRARY_PATH", "TZ", "LANG", "LC_ALL")}
        env["HOME"] = str(root)
        duckdb_dir = str(Path(duckdb.__file__).resolve().parent.parent)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-I", "-B", str(_WORKER), str(child_in), str(child_out), duckdb_dir],
                pass_fds=(child_in, child_out),
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # a ^C at the terminal reaches the parent, which stops this one
            )
        except OSError:
            os.close(parent_out)
            os.close(parent_in)
            raise SqlFailed("the SQL sandbox process did not start") from None
        finally:
            os.close(child_in)
            os.close(child_out)
        self.outbox = Connection(parent_out, readable=False)
        self.inbox = Connection(parent_in, writable=False)
        # Reaped on close, on garbage collection and at interpreter exit: no worker outlives us.
        self._finalizer = weakref.finalize(self, _stop, self.process, self.outbox, self.inbox)
        init = {
            "root": str(root),
            "read_only": read_only,
            "config": sandbox_config(limits),
            "headroom": limits.headroom_bytes,
            "host_paths": host_paths(root),
        }
        try:
            self.outbox.send_bytes(pickle.dumps(init))
            self._receive(30.0)
        except (OSError, EOFError, _Gone, SqlTimeout):
            self.stop()
            raise SqlFailed("the SQL sandbox process did not start") from None

    @property
    def alive(self) -> bool:
        return self._finalizer.alive and self.process.poll() is None

    def call(self, request: tuple[Any, ...], deadline_s: float) -> Any:
        """Send one request; the worker acknowledges it before running it, then replies."""
        started = time.monotonic()
        try:
            self.outbox.send_bytes(pickle.dumps(request))
            self._receive(deadline_s)
        except (OSError, _Gone):  # it died before taking the request (between calls): nothing ran
            raise _Unstarted() from None
        return self._receive(max(0.0, deadline_s - (time.monotonic() - started)))

    def _receive(self, deadline_s: float) -> Any:
        try:
            if not self.inbox.poll(deadline_s):
                raise SqlTimeout("no reply in time")
            payload = self.inbox.recv_bytes()
        except (EOFError, OSError):
            raise _Gone() from None
        try:
            return _Replies(io.BytesIO(payload)).load()
        except pickle.UnpicklingError as exc:  # the worker is fine; this one result cannot be returned
            raise SqlFailed(f"the result holds a value SQL memory cannot return ({exc})") from None

    def stop(self, grace_s: float = 0.0) -> None:
        _stop(self.process, self.outbox, self.inbox, grace_s)
        self._finalizer.detach()

    def forget(self) -> None:
        """In a forked copy of the parent: the worker is the parent's; drop our ends, touch nothing."""
        self._finalizer.detach()
        for end in (self.outbox, self.inbox):
            end.close()


def _stop(process: subprocess.Popen[bytes], outbox: Connection, inbox: Connection, grace_s: float = 2.0) -> None:
    """Ask the worker to close its databases (checkpointing them), then kill it if it lingers."""
    if grace_s > 0 and process.poll() is None:
        try:
            outbox.send_bytes(pickle.dumps(("close",)))
            process.wait(grace_s)
        except (OSError, subprocess.TimeoutExpired):
            pass
    if process.poll() is None:
        process.kill()
        process.wait()
    for end in (outbox, inbox):
        try:
            end.close()
        except OSError:
            pass


class SqlMemory:
    """The per-scope SQL databases of one memory home."""

    def __init__(self, root: Path, limits: SqlLimits | None = None, *, read_only: bool = False) -> None:
        self.root = Path(root)
        self.limits = limits or SqlLimits()
        self.read_only = read_only
        self._worker: _Worker | None = None
        self._lock = threading.Lock()
        self.owners = SqlOwners(self.root)

    def path_for(self, namespace: Namespace) -> Path:
        return self.owners.path_for(namespace)

    @property
    def worker_pid(self) -> int | None:
        """The worker process's id while one runs (it starts on the first statement)."""
        worker = self._worker
        return worker.process.pid if worker is not None and worker.alive else None

    def open_count(self) -> int:
        """How many scope databases the worker holds open now (at most ``limits.max_open``)."""
        with self._lock:
            if self._worker is None or not self._worker.alive:
                return 0
            return int(self._call(("stats",), self.limits.timeout_s)[1])

    def run(
        self,
        namespace: Namespace,
        statement: str,
        params: Sequence[Any] | dict[str, Any] | None = None,
        *,
        query_only: bool,
    ) -> SqlResult:
        text, kind, clean_params = checked(statement, params, query_only=query_only)
        if self.read_only and not query_only:
            raise SqlRefused("this memory home is open read-only", statement_type=kind)
        path = self.path_for(namespace)
        with self._lock:
            limits = self.limits
            if self.read_only and not path.exists():  # the scope never wrote: an empty database
                raise SqlFailed("this scope has no SQL memory yet")
            if not self.read_only:
                self.owners.note(path, namespace)
            wire = {k: v for k, v in asdict(limits).items() if k != "memory_limit"}
            reply = self._call(("run", path.name, text, clean_params, query_only, wire), limits.kill_after_s)
        outcome = reply[0]
        if outcome == "ok":
            return SqlResult(tuple(reply[1]), tuple(tuple(r) for r in reply[2]), bool(reply[3]), kind)
        if outcome == "timeout":
            raise SqlTimeout(
                f"the statement ran past the {limits.timeout_s:g} s limit and was stopped; nothing was changed"
            )
        if outcome in ("memory", "refused"):
            raise SqlRefused(f"refused by the sandbox: {reply[1]}", statement_type=kind)
        raise SqlFailed(reply[1])

    def _call(self, request: tuple[Any, ...], deadline_s: float) -> Any:
        try:
            return self._call_once(request, deadline_s)
        except _Unstarted:  # the worker had died between calls (killed from outside): one fresh try
            try:
                return self._call_once(request, deadline_s)
            except _Unstarted:
                raise SqlFailed("the SQL sandbox process stops before it can run a statement") from None

    def _call_once(self, request: tuple[Any, ...], deadline_s: float) -> Any:
        if self._worker is not None and self._worker.owner_pid != os.getpid():
            self._worker.forget()  # this process was forked: it starts a worker of its own
            self._worker = None
        if self._worker is not None and (not self._worker.alive or self._worker.limits != self.limits):
            self._worker.stop(grace_s=2.0)  # the limits changed (or it died): a fresh worker takes them
            self._worker = None
        if self._worker is None:
            if not self.read_only:
                self.root.mkdir(parents=True, exist_ok=True)
            self._worker = _Worker(self.root, self.limits, self.read_only)
        worker = self._worker
        try:
            return worker.call(request, deadline_s)
        except _Unstarted:
            self._discard(worker)
            raise
        except SqlTimeout:
            self._discard(worker)
            raise SqlTimeout(
                f"the statement ran past the {self.limits.timeout_s:g} s limit and was stopped; nothing was changed"
            ) from None
        except SqlFailed:
            raise
        except _Gone:
            self._discard(worker)
            raise SqlRefused(
                "refused by the sandbox: the statement was stopped at the memory limit (its process ended); "
                "nothing was changed"
            ) from None
        except BaseException:  # ^C or a bad reply mid-call: the worker's state is unknown, end it
            self._discard(worker)
            raise

    def databases(self, tenant: str, pairs: Sequence[tuple[str, str]] | None) -> list[Path]:
        return self.owners.databases(tenant, pairs)

    def note_owners(self, tenant: str, pairs: Sequence[tuple[str, str]]) -> int:
        return self.owners.note_owners(tenant, pairs)

    def unattributed(self) -> list[Path]:
        return self.owners.unattributed()

    def erase(self, tenant: str, pairs: Sequence[tuple[str, str]] | None) -> list[str]:
        """Delete the databases of a tenant or of its pairs; the worker, which may hold one open,
        is stopped first (the next statement starts a fresh one). Answers the names deleted."""
        with self._lock:
            if self._worker is not None:
                self._discard(self._worker)
            gone = self.databases(tenant, pairs)
            for path in gone:
                path.unlink(missing_ok=True)
        return [p.name for p in gone]

    def _discard(self, worker: _Worker) -> None:
        worker.stop()  # killed at once: the statement's uncommitted transaction dies with it
        self._worker = None

    def close(self) -> None:
        with self._lock:
            if self._worker is not None and self._worker.owner_pid != os.getpid():
                self._worker.forget()  # a forked copy closes nothing of its parent's
            elif self._worker is not None:
                self._worker.stop(grace_s=5.0)
            self._worker = None
