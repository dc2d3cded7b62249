"""Write-path throughput: `python -m evals.bench_write [--points 2000] [--bulk 100000]`.

Point writes: ``--points`` facts written one by one through ``MemoryTool.set`` into a home with
the ``static`` embedder, each judged against its peers; the time the embedder spent is measured
inside the call and subtracted, so the figure is the write path itself (phases, peer check,
DuckDB transaction, index queueing; the index flush every ``flush_at`` writes is included in the
mean, not hidden). Baseline, same run: one bare DuckDB transaction appending one row to a table
of the same width.

Bulk: ``--bulk`` entries in one ``bulk_set`` call into a fresh home (embedding, verdicts for the
first bulk_check_cap entries, one DuckDB transaction, the index write). Baselines, same run: the
static embedder alone over the same texts, one Arrow insert of as many version rows, and the
columnar floor (``evals/write_floor.py``: only the steps no bulk write can skip).

Ratios are printed beside the times: the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import duckdb
import numpy as np

from evals.bench_search import sentences
from evals.write_floor import columnar_floor
from memory_core import Identity, Memory
from memory_core.adapters.duckdb.schema import COLS, DDL, VERSION_COLUMNS, version_params
from memory_core.adapters.duckdb.staging import STAGED_INSERT, arrow_versions
from memory_core.adapters.embedders import make_embedder


class TimedEmbedder:
    """Wraps an embedder and keeps the time spent in it, so the benchmark can take it out."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dim, self.spent = inner, inner.name, inner.dim, 0.0

    def embed(self, texts):
        return self._timed(self.inner.embed, texts)

    def embed_pairs(self, pairs):
        return self._timed(self.inner.embed_pairs, pairs)

    def _timed(self, call, argument):
        started = time.perf_counter()
        try:
            return call(argument)
        finally:
            self.spent += time.perf_counter() - started


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def bare_transaction_ms(folder: Path, n: int) -> float:
    """One transaction appending one version row, nothing else: the floor of any durable write."""
    con = duckdb.connect(str(folder / "bare.duckdb"))
    con.execute("SET TimeZone = 'UTC'")
    con.execute(DDL)
    sample = Memory.open(folder / "sample")
    row = sample.for_run(Identity(tenant="t", user="u")).set("k", "v").version
    sample.close()
    insert = f"INSERT INTO memory_versions ({COLS}) VALUES ({', '.join('?' * len(VERSION_COLUMNS))})"
    times = []
    for i in range(n):
        params = version_params(i + 1, row, i + 1)
        started = time.perf_counter()
        con.execute("BEGIN")
        con.execute(insert, params)
        con.execute("COMMIT")
        times.append((time.perf_counter() - started) * 1000)
    con.close()
    return statistics.median(times)


def point_writes(folder: Path, n: int, cache: Path) -> dict:
    embedder = TimedEmbedder(make_embedder("static", cache_dir=cache))
    texts = sentences(n, seed=7)
    with Memory.open(folder / "points", embedder=embedder) as memory:
        tool = memory.for_run(Identity(tenant="bench", user="u"))
        tool.set("warmup", "warm the embedder and the namespace cache")
        samples, verdicts = [], {}
        started_all = time.perf_counter()
        for i, text in enumerate(texts):
            embedder.spent = 0.0
            key = f"fact{i % (n // 2)}"  # half the writes revise an earlier key
            started = time.perf_counter()
            result = tool.set(key, text)
            samples.append((time.perf_counter() - started - embedder.spent) * 1000)
            verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
        total = time.perf_counter() - started_all
    return {
        "writes": n,
        "p50_ms": statistics.median(samples),
        "p95_ms": _pct(samples, 95),
        "mean_ms": statistics.fmean(samples),
        "wall_s_with_embedding": total,
        "verdicts": verdicts,
    }


def bulk(folder: Path, n: int, cache: Path) -> dict:
    texts = sentences(n, seed=11)
    entries = [{"key": f"note{i}", "value": text} for i, text in enumerate(texts)]
    # Two embedder instances, each loaded but cold: the static embedder caches the tokens of the
    # words it has seen, and the baseline must not warm that cache for the bulk write.
    baseline_embedder = make_embedder("static", cache_dir=cache)
    baseline_embedder.embed(["warm up"])
    started = time.perf_counter()
    baseline_embedder.embed([f"note{i}: {t}" for i, t in enumerate(texts)])
    embed_s = time.perf_counter() - started
    embedder = TimedEmbedder(make_embedder("static", cache_dir=cache))
    embedder.embed(["warm up"])
    with Memory.open(folder / "bulk", embedder=embedder) as memory:
        tool = memory.for_run(Identity(tenant="bench", user="u"))
        embedder.spent = 0.0
        started = time.perf_counter()
        result = tool.bulk_set(entries)
        bulk_s = time.perf_counter() - started
        inside_embedding_s = embedder.spent
        rows = memory.store.inspection.table_counts()["memory_versions"]
        indexed = memory.projector.status()["rows"]
        sample = list(result.written[:1])
    con = duckdb.connect(str(folder / "arrow.duckdb"))
    con.execute(DDL)
    data = arrow_versions(1, sample * n)
    started = time.perf_counter()
    con.register("data", data)
    con.execute(STAGED_INSERT.format(source="data"))
    arrow_s = time.perf_counter() - started
    con.close()
    floor = columnar_floor(folder, entries, sample[0], cache)
    return {
        "entries": n,
        "seconds": bulk_s,
        "columnar_floor": floor,
        "rows_per_s": n / bulk_s,
        "rows_stored": rows,
        "index_rows": indexed,
        "peer_checked": result.peer_checked,
        "peer_check_skipped": result.peer_check_skipped,
        "embedding_inside_s": inside_embedding_s,
        "baseline_embed_only_s": embed_s,
        "baseline_arrow_insert_s": arrow_s,
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=2000)
    parser.add_argument("--bulk", type=int, default=100_000)
    parser.add_argument(
        "--cache",
        type=Path,
        default=Path(".memory/models"),
        help="where the distilled static model is cached (default .memory/models)",
    )
    parser.add_argument("--out", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    random.seed(0)
    with tempfile.TemporaryDirectory(prefix="memcore-bench-write-") as tmp:
        folder = Path(tmp)
        baseline = bare_transaction_ms(folder, 300)
        points = point_writes(folder, args.points, args.cache)
        bulk_figures = bulk(folder, args.bulk, args.cache)
    report = {
        "at": datetime.now(timezone.utc).isoformat(),
        "baseline_bare_txn_p50_ms": baseline,
        "point": points,
        "bulk": bulk_figures,
    }
    p, b = points, bulk_figures
    print(
        f"point write (embedding excluded), {p['writes']} writes: p50 {p['p50_ms']:.2f} ms "
        f"(target <= 5), p95 {p['p95_ms']:.2f} ms, mean {p['mean_ms']:.2f} ms incl. index flushes"
    )
    print(
        f"  baseline bare DuckDB one-row transaction p50 {baseline:.2f} ms -> point p50 is "
        f"{p['p50_ms'] / baseline:.1f}x the bare transaction; verdicts {p['verdicts']}"
    )
    print(
        f"bulk_set {b['entries']:,} rows: {b['seconds']:.1f} s = {b['rows_per_s']:,.0f} rows/s (target >= 20,000); "
        f"{b['peer_checked']} peer-checked, {b['peer_check_skipped']} past the cap; "
        f"{b['rows_stored']:,} rows stored, {b['index_rows']:,} indexed"
    )
    print(
        f"  embedding took {b['embedding_inside_s']:.1f} s inside the embedder, most of it on a worker thread "
        "beside the insert (so it does not add up with the rest)"
    )
    print(
        f"  baselines: static embedding alone {b['baseline_embed_only_s']:.1f} s "
        f"({b['seconds'] / b['baseline_embed_only_s']:.2f}x), Arrow insert alone "
        f"{b['baseline_arrow_insert_s']:.2f} s"
    )
    floor = b["columnar_floor"]
    print(
        f"  columnar floor (the unavoidable steps alone, evals/write_floor.py): {floor['total']:.1f} s = "
        f"{b['entries'] / floor['total']:,.0f} rows/s -> "
        f"bulk_set takes {b['seconds'] / floor['total']:.2f}x the floor; "
        + ", ".join(f"{k} {v:.2f} s" for k, v in floor.items() if k != "total")
    )
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
