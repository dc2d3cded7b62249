"""SQL memory's limits: result bytes, time and memory hold inside the worker process, and the
worker never outlives its memory home."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from memory_core import Identity, Memory
from memory_core.adapters.duckdb.sql_memory import SqlLimits, SqlMemory, parse_size
from memory_core.errors import SqlFailed, SqlRefused, SqlTimeout
from memory_core.identity import Namespace, Scope

ANA = Identity(tenant="acme", user="ana", agent="helper")


@pytest.fixture
def memory(home, clock):
    with Memory.open(home, clock=clock) as m:
        yield m


def status(pid: int, key: str) -> int:
    """A /proc/<pid>/status figure in bytes (0 when the process is gone)."""
    try:
        lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    except OSError:
        return 0
    return next((int(line.split()[1]) * 1024 for line in lines if line.startswith(key + ":")), 0)


def gone(pid: int, within_s: float = 10.0) -> bool:
    """The process ended (reaped, or a zombie nobody reaps in a container)."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            return True
        if state == "Z":
            return True
        time.sleep(0.05)
    return False


# --- result bytes -------------------------------------------------------------------------------


def test_a_result_over_max_result_bytes_is_cut_at_a_row_boundary(memory):
    memory.sql.limits = SqlLimits(max_result_bytes=1000)
    tool = memory.for_run(ANA)
    result = tool.sql_query("SELECT i, repeat('x', 100) AS s FROM range(100) t(i) ORDER BY i")
    assert result.truncated and 0 < len(result.rows) < 10
    assert [r[0] for r in result.rows] == list(range(len(result.rows)))  # the first rows, whole
    assert sum(8 + 8 + len(s) for _, s in result.rows) <= 1000
    fits = tool.sql_query("SELECT i FROM range(10) t(i)")
    assert not fits.truncated and len(fits.rows) == 10


def test_a_single_row_over_max_result_bytes_comes_back_as_no_rows_truncated(memory):
    memory.sql.limits = SqlLimits(max_result_bytes=1000)
    result = memory.for_run(ANA).sql_query("SELECT repeat('x', 5000) AS s")
    assert result.columns == ("s",) and result.rows == () and result.truncated


def test_the_default_byte_cap_is_8_mib(memory):
    assert memory.sql.limits.max_result_bytes == 8 * 2**20
    result = memory.for_run(ANA).sql_query("SELECT repeat('x', 1000000) FROM range(20)")
    assert result.truncated and len(result.rows) == 8


def test_limits_are_checked_when_built():
    assert parse_size("64MB") == 64 * 10**6 and parse_size("1GiB") == 2**30
    for bad in ({"memory_limit": "lots"}, {"timeout_s": 0}, {"max_result_bytes": 0}):
        with pytest.raises(ValueError):
            SqlLimits(**bad)


# --- time ---------------------------------------------------------------------------------------

# One regexp_replace over one 50 MB string: a single function call, so DuckDB's interrupt is not
# looked at until it returns (about 5 s here); only the process boundary stops it in time.
DEAF_TO_INTERRUPT = "SELECT length(regexp_replace(repeat('a', 50000000), 'a', 'bb', 'g'))"


def test_a_statement_deaf_to_the_interrupt_is_killed_within_twice_the_limit_and_changes_nothing(memory):
    memory.sql.limits = SqlLimits(timeout_s=1.0, memory_limit="256MB")
    tool = memory.for_run(ANA)
    tool.sql_exec("CREATE TABLE t (n BIGINT)")
    tool.sql_exec("INSERT INTO t VALUES (1)")
    before = memory.sql.worker_pid
    started = time.monotonic()
    with pytest.raises(SqlTimeout) as stopped:
        tool.sql_exec(f"INSERT INTO t {DEAF_TO_INTERRUPT}")
    assert time.monotonic() - started < 2.0 and stopped.value.status == 408
    assert gone(before)  # killed: the INSERT's transaction died with the process
    assert tool.sql_query("SELECT n FROM t").rows == ((1,),)  # a fresh worker, the database intact
    assert memory.sql.worker_pid not in (None, before)


def test_a_worker_killed_from_outside_is_replaced_and_committed_rows_survive(memory):
    tool = memory.for_run(ANA)
    tool.sql_exec("CREATE TABLE t (n BIGINT)")
    tool.sql_exec("INSERT INTO t VALUES (7)")
    pid = memory.sql.worker_pid
    os.kill(pid, signal.SIGKILL)  # say the kernel's OOM killer took it between two calls
    # No wait: it may still be dying; it never took this statement, so a fresh worker runs it.
    assert tool.sql_query("SELECT n FROM t").rows == ((7,),)
    assert gone(pid) and memory.sql.worker_pid != pid


# --- memory -------------------------------------------------------------------------------------

EXPLOSIONS = [
    ("repeat-2e9", "SELECT length(repeat('x', 2000000000))"),
    ("string-agg-20gb", "SELECT length(string_agg(repeat('ab', 100000), '')) FROM range(100000)"),
    ("repeat-of-repeat", "SELECT length(repeat(repeat('x', 1000000), 1000))"),
    ("list-1e8", "SELECT sum(len(r)) FROM (SELECT range(100000000) r)"),
    ("string-split", "SELECT len(string_split(repeat('a,', 50000000), ','))"),
    ("list-of-strings", "SELECT list(repeat('x', 1000)) FROM range(2000000)"),
]


@pytest.mark.parametrize("statement", [s for _, s in EXPLOSIONS], ids=[n for n, _ in EXPLOSIONS])
def test_an_allocation_past_the_memory_limit_is_refused_fast_and_bounded(memory, statement):
    limit = "64MB"
    memory.sql.limits = SqlLimits(memory_limit=limit, timeout_s=5.0)
    tool = memory.for_run(ANA)
    tool.sql_query("SELECT 1")
    pid = memory.sql.worker_pid
    rss_before = status(pid, "VmRSS")
    started = time.monotonic()
    with pytest.raises(SqlRefused) as refused:
        tool.sql_query(statement)
    assert time.monotonic() - started < 5.0 and "memory" in refused.value.message.lower()
    if memory.sql.worker_pid == pid:  # the worker lived: its high-water mark shows the growth
        assert status(pid, "VmHWM") - rss_before <= 2 * parse_size(limit)
    assert tool.sql_query("SELECT 42").rows == ((42,),)


@pytest.mark.slow
def test_a_string_grown_piece_by_piece_stops_at_the_memory_limit(memory):
    memory.sql.limits = SqlLimits(memory_limit="64MB", timeout_s=30.0)
    tool = memory.for_run(ANA)
    tool.sql_query("SELECT 1")
    pid = memory.sql.worker_pid
    rss_before = status(pid, "VmRSS")
    with pytest.raises(SqlRefused):
        tool.sql_query("SELECT length(lpad('x', 1000000000, 'y'))")  # about 5 s of small reallocations
    assert status(pid, "VmHWM") - rss_before <= 2 * parse_size("64MB")


# --- the worker's life --------------------------------------------------------------------------


def test_close_ends_the_worker(home, clock):
    memory = Memory.open(home, clock=clock)
    memory.for_run(ANA).sql_exec("CREATE TABLE t (v INTEGER)")
    pid = memory.sql.worker_pid
    assert pid is not None and not gone(pid, within_s=0.1)
    memory.close()
    assert gone(pid, within_s=5.0)


def test_changed_limits_take_a_fresh_worker(memory):
    tool = memory.for_run(ANA)
    tool.sql_query("SELECT 1")
    first = memory.sql.worker_pid
    memory.sql.limits = SqlLimits(max_rows=5)
    assert tool.sql_query("SELECT * FROM range(10)").truncated
    assert gone(first) and memory.sql.worker_pid != first


SCRIPT = """
import sys
from memory_core import Identity, Memory
memory = Memory.open(sys.argv[1])
memory.for_run(Identity(tenant="acme", user="ana")).sql_exec("CREATE TABLE t (v INTEGER)")
print(memory.sql.worker_pid, flush=True)
if sys.argv[2] == "sleep":
    import time
    time.sleep(60)
"""


def test_an_interpreter_exit_without_close_neither_hangs_nor_leaves_the_worker(tmp_path):
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path / "home"), "exit"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert gone(int(done.stdout.split()[-1]))


def test_a_killed_parent_leaves_no_worker(tmp_path):
    parent = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(SCRIPT), str(tmp_path / "home"), "sleep"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        pid = int(parent.stdout.readline())
    finally:
        parent.kill()
        parent.wait()
    assert gone(pid)  # its pipe closed: the worker read the end and left


def test_a_read_only_home_reads_and_refuses_writes(home, clock):
    with Memory.open(home, clock=clock) as memory:
        memory.for_run(ANA).sql_exec("CREATE TABLE t AS SELECT 1 AS v")
    with Memory.open(home, clock=clock, read_only=True) as memory:
        tool = memory.for_run(ANA)
        assert tool.sql_query("SELECT v FROM t").rows == ((1,),)
        with pytest.raises(SqlRefused):
            tool.sql_exec("INSERT INTO t VALUES (2)")
        with pytest.raises(SqlFailed):
            memory.for_run(Identity(tenant="acme", user="bea")).sql_query("SELECT 1")


def test_a_relative_root_is_the_same_folder_for_the_worker(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sql, ns = SqlMemory(Path("home/sql")), Namespace("acme", Scope.USER, "ana")
    try:
        sql.run(ns, "CREATE TABLE t AS SELECT 1 AS v", query_only=False)
        assert (tmp_path / sql.path_for(ns)).exists()
        assert sql.run(ns, "SELECT v FROM t", query_only=True).rows == ((1,),)
    finally:
        sql.close()


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_a_forked_copy_starts_its_own_worker_and_leaves_the_parents_alone(tmp_path):
    sql, ns = SqlMemory(tmp_path / "sql"), Namespace("acme", Scope.USER, "ana")
    try:
        sql.run(ns, "CREATE TABLE t AS SELECT 1 AS v", query_only=False)
        parent_worker = sql.worker_pid
        child = os.fork()
        if child == 0:  # pragma: no cover - runs in the child
            ok = False
            try:
                other = Namespace("acme", Scope.USER, "bea")
                ok = sql.run(other, "SELECT 2", query_only=True).rows == ((2,),) and sql.worker_pid != parent_worker
                sql.close()
            finally:
                os._exit(0 if ok else 1)
        assert os.waitpid(child, 0)[1] == 0
        assert sql.worker_pid == parent_worker and sql.run(ns, "SELECT v FROM t", query_only=True).rows == ((1,),)
    finally:
        sql.close()
