"""SQL memory limits, measured: `python -m evals.bench_sql_limits [--repeat 300]`.

Time: statements that do not stop at DuckDB's interrupt (one huge function call) under
``timeout_s``; printed: the setting, when the call returned (the statement stopped), the ratio.
The target is under 2x the setting.

Memory: statements that allocate past ``memory_limit`` outside DuckDB's buffer manager (huge
strings, lists); printed: the setting, the time to stop, the worker's peak RSS growth over its
resident size before the statement (sampled every 2 ms, and its kernel high-water mark when it
survives), the ratio of that growth to the setting. The target is about 2x or less.

Overhead: ``--repeat`` small statements through ``SqlMemory`` (worker process) and through the
previous in-process path (the same sandboxed connection in this process, one transaction per
statement), interleaved in the same run; medians, and their ratio, since the machine is shared.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

import duckdb

from memory_core.adapters.duckdb.sql_memory import SqlLimits, SqlMemory, parse_size, sandbox_config
from memory_core.errors import MemcoreError
from memory_core.identity import Namespace, Scope

NS = Namespace("bench", Scope.USER, "ana")
TIME_CASES = [
    ("regexp_replace 20M", "SELECT length(regexp_replace(repeat('a', 20000000), 'a', 'bb', 'g'))", "512MB"),
    ("lpad 1e9", "SELECT length(lpad('x', 1000000000, 'y'))", "64MB"),
]
MEMORY_CASES = [
    ("repeat 2e9", "SELECT length(repeat('x', 2000000000))"),
    ("string_agg 20 GB", "SELECT length(string_agg(repeat('ab', 100000), '')) FROM range(100000)"),
    ("repeat of repeat", "SELECT length(repeat(repeat('x', 1000000), 1000))"),
    ("list of 1e8", "SELECT sum(len(r)) FROM (SELECT range(100000000) r)"),
    ("string_split 5e7", "SELECT len(string_split(repeat('a,', 50000000), ','))"),
    ("list of strings", "SELECT list(repeat('x', 1000)) FROM range(2000000)"),
]


def _status(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(key + ":"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measure(sql: SqlMemory, statement: str) -> tuple[float, int, str]:
    """(seconds to return, peak RSS growth of the worker in bytes, outcome)."""
    sql.run(NS, "SELECT 1", query_only=True)  # the worker is up, the database open
    pid = sql.worker_pid
    assert pid is not None
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")  # reset the high-water mark
    except OSError:
        pass
    base = _status(pid, "VmRSS")
    peak, done = base, threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.is_set():
            peak = max(peak, _status(pid, "VmRSS"))
            time.sleep(0.002)

    sampler = threading.Thread(target=sample)
    sampler.start()
    started = time.perf_counter()
    try:
        sql.run(NS, statement, query_only=True)
        outcome = "finished"
    except MemcoreError as exc:
        outcome = exc.code
    elapsed = time.perf_counter() - started
    peak = max(peak, _status(pid, "VmHWM"))
    done.set()
    sampler.join()
    return elapsed, max(0, peak - base), outcome


def overhead(root: Path, repeat: int) -> tuple[float, float]:
    """Median seconds per statement: through the worker, and in this process as before."""
    statements = ["SELECT 1", "INSERT INTO t VALUES (1)", "SELECT count(*) FROM t"]
    sql = SqlMemory(root / "worker")
    sql.run(NS, "CREATE TABLE t (v INTEGER)", query_only=False)
    con = duckdb.connect(str(root / "inproc.duckdb"), config=sandbox_config(SqlLimits()))
    con.execute("CREATE TABLE t (v INTEGER)")

    def worker_path(statement: str) -> None:
        sql.run(NS, statement, query_only=False)

    def in_process(statement: str) -> None:  # the previous path: a Timer, a transaction, a fetch
        timer = threading.Timer(10.0, con.interrupt)
        timer.start()
        con.execute("BEGIN TRANSACTION")
        cursor = con.execute(statement)
        if cursor.description:
            cursor.fetchmany(10_001)
        timer.cancel()
        con.execute("COMMIT")

    # Interleaved, one statement each in turn, and medians: the shared machine's load spikes
    # then fall on both paths alike and do not move the figure.
    times: tuple[list[float], list[float]] = ([], [])
    for i in range(repeat):
        for path, spent in zip((worker_path, in_process), times):
            started = time.perf_counter()
            path(statements[i % len(statements)])
            spent.append(time.perf_counter() - started)
    sql.close()
    con.close()
    return statistics.median(times[0]), statistics.median(times[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        print("time limit (statements that ignore DuckDB's interrupt; ratio = stopped_s / timeout_s)")
        header = f"{'case':<22} {'timeout_s':>9} {'memory_limit':>12} {'stopped_s':>9} {'ratio':>6} {'rss_MB':>7}"
        print(f"  {header}  outcome")
        for name, statement, memory in TIME_CASES:
            for timeout in (1.0, 2.0):
                sql = SqlMemory(root / f"t{timeout}{name[:3]}", SqlLimits(timeout_s=timeout, memory_limit=memory))
                elapsed, growth, outcome = measure(sql, statement)
                sql.close()
                ratio = elapsed / timeout
                row = f"{name:<22} {timeout:>9.1f} {memory:>12} {elapsed:>9.2f} {ratio:>6.2f} {growth / 1e6:>7.1f}"
                print(f"  {row}  {outcome}")
        print("memory limit (allocations outside DuckDB's buffer manager; ratio = growth / memory_limit)")
        print(f"  {'case':<22} {'memory_limit':>12} {'stopped_s':>9} {'rss_growth_MB':>13} {'ratio':>6}  outcome")
        for name, statement in MEMORY_CASES:
            for memory in ("64MB", "256MB"):
                sql = SqlMemory(root / f"m{memory}{name[:4]}", SqlLimits(timeout_s=10.0, memory_limit=memory))
                elapsed, growth, outcome = measure(sql, statement)
                sql.close()
                ratio = growth / parse_size(memory)
                print(f"  {name:<22} {memory:>12} {elapsed:>9.2f} {growth / 1e6:>13.1f} {ratio:>6.2f}  {outcome}")
        worker, inproc = overhead(root, args.repeat)
        print(f"overhead per small statement (median of {args.repeat} each, interleaved, same run)")
        print(f"  worker process {worker * 1e3:.3f} ms, in-process {inproc * 1e3:.3f} ms, ratio {worker / inproc:.2f}x")


if __name__ == "__main__":
    main()
