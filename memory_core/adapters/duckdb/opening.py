"""Opening a home's DuckDB file with every failure typed.

DuckDB admits one process per file while one of them writes, and says so with an untyped
``IOException`` ("Could not set lock on file ..."); a damaged file, a folder where the file should
be, or a missing permission come as the same class. A caller (the CLI, the service) gets a typed
error instead: ``HomeBusy`` (423), ``StoreCorrupted`` (500) or ``HomeUnusable`` (409).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import duckdb

from ...errors import HomeBusy, HomeUnusable, MemcoreError, StoreCorrupted

_HOLDER_PID = re.compile(r"\(PID (\d+)\)")  # DuckDB names the lock's holder on Linux and macOS
_DAMAGED = (  # what DuckDB says of a file that is not (or no longer) a database it can read
    "not a valid DuckDB database file",
    "database file with version number",
    "Corrupt database",
    "Could not read enough bytes",  # a truncated file
)


def refuse_a_file(home: Path) -> None:
    if home.exists() and not home.is_dir():
        raise HomeUnusable(f"memory home {home} is a file, not a folder", home=str(home), reason="not_a_folder")


def make_folder(home: Path) -> None:
    try:
        home.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise HomeUnusable(
            f"memory home {home} cannot be created: {exc.strerror or exc}", home=str(home), reason="os_error"
        ) from exc


def connect(db_path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(db_path), read_only=read_only)
    except (duckdb.Error, OSError) as exc:
        raise open_refusal(db_path, exc) from exc


def open_refusal(db_path: Path, exc: BaseException, *, connected: bool = False) -> MemcoreError:
    """The typed error for what DuckDB (or the OS) answered while opening ``db_path``. ``connected``:
    the file opened, and reading or migrating its schema failed."""
    text = str(exc)
    home = str(db_path.parent)
    if "Could not set lock" in text or "Conflicting lock" in text:
        found = _HOLDER_PID.search(text)
        pid = int(found.group(1)) if found else None
        holder = f"another process (PID {pid})" if pid is not None else "another process"
        return HomeBusy(
            f"memory home {home} is held by {holder}: a home admits one process while it writes. Close "
            "that process and try again; to share a home, serve it from one process (memcore serve) and "
            "send requests there instead of opening it twice: memcore --url URL --key KEY ... "
            "(RemoteMemory(url, key) in Python)",
            home=home,
            holder_pid=pid,
        )
    if isinstance(exc, duckdb.ConnectionException) and "different configuration" in text:
        # This process holds the file already, in the other mode (read-only vs writable).
        return HomeBusy(
            f"memory home {home} is already open in this process in another mode (read-only or "
            "writable); close that Memory first",
            home=home,
            holder_pid=os.getpid(),
        )
    if any(marker in text for marker in _DAMAGED):
        return StoreCorrupted(
            f"{db_path} is not a memory store this build can read (not a DuckDB database, damaged, or "
            f"from another DuckDB version): {text}. Restore it from a backup, or point --home / "
            "MEMCORE_HOME at another folder",
            home=home,
        )
    if connected and not isinstance(exc, (duckdb.IOException, OSError)):
        return StoreCorrupted(f"{db_path} opened but its contents could not be read: {text}", home=home)
    return HomeUnusable(f"memory home {home} cannot be opened: {text}", home=home, reason="io_error")
