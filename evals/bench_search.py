"""Search latency and recall at scale: `python -m evals.bench_search [--sizes 10000,100000,1000000]`.

For each size: synthetic sentences embedded with the ``static`` embedder are written to a fresh
retrieval index (ingest throughput), the indexes are built (build time) and loaded into memory as
a long-lived process would (prewarm), then queries with an as_of + tenant prefilter run through
the real hybrid pipeline (p50/p95), through recall's default recipe (``DEFAULT_RECIPE``), through
the pipeline's vector leg alone, and through an exact
numpy brute force over the same rows in the same process, each in a loop of its own. The vector
leg's top 10 is compared with the exact top 10 (recall@10). Ratios are printed beside the times because this machine is
shared and noisy: only same-run ratios mean much.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import shutil
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
import pyarrow as pa

from memory_core.adapters.embedders import make_embedder
from memory_core.adapters.lance import LanceIndex, LanceSearch
from memory_core.adapters.lance.index import VECTOR_INDEX_MIN_ROWS
from memory_core.adapters.lance.read import DERIVED_COLUMNS, SPAN_COLUMNS, live_spans
from memory_core.adapters.lance.rows import namespace_key, schema
from memory_core.environment import resolve_home
from memory_core.identity import Namespace, Scope
from memory_core.model import Kind
from memory_core.retrieval.recipes import DEFAULT_RECIPE, KEY_HIT, get_recipe
from memory_core.retrieval.types import SearchRequest
from memory_core.services.search import run_search
from memory_core.temporal import micros

SUBJECTS = ["Ana", "Bo", "Chidi", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun", "Kemal", "Lena"]
VERBS = [
    "moved to",
    "started working at",
    "bought a flat in",
    "took a course in",
    "visited",
    "left",
    "adopted a dog in",
    "ran a marathon in",
    "opened a bakery in",
    "studied music in",
    "sold a car in",
]
PLACES = [
    "Lisbon",
    "Osaka",
    "Toronto",
    "Nairobi",
    "Lima",
    "Oslo",
    "Hanoi",
    "Austin",
    "Porto",
    "Quito",
    "Accra",
    "Riga",
    "Perth",
    "Cusco",
    "Bergen",
    "Tunis",
    "Davao",
    "Leeds",
    "Graz",
    "Malmo",
]
DETAILS = [
    "last spring",
    "after the wedding",
    "with two friends",
    "for the third time",
    "despite the rain",
    "on a tight budget",
    "to be closer to family",
    "during the holidays",
    "for a new job",
    "at short notice",
]
TENANTS = 4
WARMUP = 5  # queries each method answers before its timed ones (a process's first searches load lazily)
START, END = datetime(2019, 1, 1, tzinfo=timezone.utc), datetime(2026, 1, 1, tzinfo=timezone.utc)


def sentences(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [
        f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(PLACES)} {rng.choice(DETAILS)} "
        f"(note {rng.randrange(10**6)})"
        for _ in range(n)
    ]


def synthetic_table(texts: list[str], vectors: np.ndarray, seed: int) -> tuple[pa.Table, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    n = len(texts)
    lo, hi = micros(START), micros(END)
    valid = rng.integers(lo, hi, n)
    ends = np.where(rng.random(n) < 0.3, valid + rng.integers(10**12, 10**14, n), -1)
    tenants = np.array([f"tenant-{i}" for i in rng.integers(0, TENANTS, n)])
    ids = np.array([f"f{i:08d}" for i in range(n)])
    columns = {
        "fact_id": ids,
        "version_id": ids,
        "namespace": np.array([namespace_key(t, "tenant", t) for t in tenants]),
        "tenant": tenants,
        "scope": np.full(n, "tenant"),
        "owner_id": tenants,
        "key": np.array([f"k{i}" for i in range(n)]),
        "kind": np.full(n, "fact"),
        "memory_type": np.full(n, "general"),
        "status": np.full(n, "active"),
        "source_class": np.full(n, "stated"),
        "sensitivity": np.full(n, "normal"),
        "valid_at": valid,
        "invalid_at": pa.array(ends, mask=ends < 0),
        "observed_at": valid,
        "expires_at": pa.nulls(n, pa.int64()),
        "created_at": valid,
        "version": np.ones(n, dtype=np.int64),
        "reinforcement_count": np.zeros(n, dtype=np.int64),
        "subject": pa.nulls(n, pa.string()),
        # runs of 20 consecutive rows share a session, as the turns of a conversation do
        "session": np.array([f"session-{i // 20}" for i in range(n)]),
        "confidence": np.ones(n),
        "text": np.array(texts),
        "value_json": np.array([json.dumps(t) for t in texts]),
        "provenance_json": np.full(n, "{}"),
        "vector": pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1), pa.float32()), vectors.shape[1]),
    }
    stored = pa.schema([f for f in schema(vectors.shape[1]) if f.name not in DERIVED_COLUMNS])
    table = pa.table({name: columns[name] for name in stored.names}, schema=stored)
    arrays = {
        "tenant": tenants,
        "valid": valid,
        "end": np.where(ends < 0, np.iinfo(np.int64).max, ends),
        "vectors": vectors,
        "ids": ids,
    }
    return table, arrays


def with_derived(table: pa.Table, dim: int) -> pa.Table:
    """The stored columns plus ``live_span``, derived as the write path derives it."""
    table = table.append_column("live_span", live_spans(*(table.column(c).combine_chunks() for c in SPAN_COLUMNS)))
    return table.select(schema(dim).names).cast(schema(dim))


def exact_top(arrays: dict[str, np.ndarray], vector: np.ndarray, tenant: str, as_of: int, k: int) -> list[str]:
    mask = (arrays["tenant"] == tenant) & (arrays["valid"] <= as_of) & (arrays["end"] > as_of)
    rows = np.flatnonzero(mask)
    scores = arrays["vectors"][rows] @ vector
    top = rows[np.argpartition(-scores, min(k, len(rows) - 1))[:k]]
    top = top[np.argsort(-(arrays["vectors"][top] @ vector), kind="stable")]
    return [str(arrays["ids"][i]) for i in top]


def bench_size(n: int, embedder, work: Path, queries: int, say) -> dict:
    texts = sentences(n, seed=n)
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    embed_s = time.perf_counter() - started
    table, arrays = synthetic_table(texts, vectors, seed=n)
    folder = work / f"lance-{n}"
    shutil.rmtree(folder, ignore_errors=True)
    index = LanceIndex(folder, embedder.name, embedder.dim)
    started = time.perf_counter()
    index.replace_all(with_derived(table, embedder.dim))  # derives, writes the rows and builds the FTS index
    write_s = time.perf_counter() - started
    started = time.perf_counter()
    index.build_scalar_indexes()
    if n >= VECTOR_INDEX_MIN_ROWS:  # as optimize() does
        index.build_vector_index()
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    cached = index.prewarm()  # a long-lived process loads the indexes once, not query by query
    searcher = LanceSearch(index)
    prewarm_s = time.perf_counter() - started
    say(
        f"{n:>9,} rows: embedded {embed_s:.1f}s, wrote+FTS {write_s:.1f}s, vector/scalar indexes {build_s:.1f}s, "
        f"prewarm {prewarm_s:.1f}s ({cached / 2**20:,.0f} MiB)"
    )

    rng = random.Random(7)
    qtexts = sentences(queries + WARMUP, seed=10**9 + n)
    qvectors = embedder.embed(qtexts)
    cases = []
    for text, qv in zip(qtexts, qvectors):
        tenant = f"tenant-{rng.randrange(TENANTS)}"
        as_of = datetime.fromtimestamp(rng.uniform(datetime(2021, 1, 1).timestamp(), END.timestamp()), timezone.utc)
        cases.append((text, qv, tenant, as_of))

    os.sync()  # the build's files are written back now, not while the queries are timed
    gc.collect()
    gc.freeze()  # the harness's own million sentences need not be walked by every collection

    # Each method answers every query in a loop of its own (its first WARMUP untimed): interleaved, each paid for
    # the CPU caches the one before had filled (the exact scan sweeps ~250 MB per query), which said more
    # about the order of the loop than about either method.
    # The key-match and graph legs read the rows of the facts the store names for them: here one
    # fact of the query's tenant (a query naming a key) or 64 (the graph leg's most).
    by_tenant: dict[str, np.ndarray] = {}
    for tenant in {c[2] for c in cases}:
        by_tenant[tenant] = arrays["ids"][arrays["tenant"] == tenant]
    named_rng = np.random.default_rng(11)
    key_named = [{"key": {str(named_rng.choice(by_tenant[c[2]])): KEY_HIT}} for c in cases]
    graph_named = [
        {"graph": {str(f): 1.0 for f in named_rng.choice(by_tenant[c[2]], 64, replace=False)}} for c in cases
    ]

    def searched(recipe_name: str, named: list | None = None) -> tuple[list[float], list[list[str]]]:
        recipe, latencies, answers = get_recipe(recipe_name), [], []
        for n, (text, _, tenant, as_of) in enumerate(cases):
            ns = Namespace(tenant, Scope.TENANT, tenant)
            request = SearchRequest(
                query=text,
                scope=Scope.TENANT,
                k=10,
                recipe=recipe_name,
                sources=frozenset({Kind.FACT, Kind.NOTE}),
                as_of=as_of,
            )
            t0 = time.perf_counter()
            fact_legs = None if named is None else named[n]
            hits = run_search(searcher, embedder, ns, request, recipe, END, fact_legs=fact_legs).result.hits
            latencies.append((time.perf_counter() - t0) * 1000)
            answers.append([h.fact_id for h in hits])
        return latencies[WARMUP:], answers[WARMUP:]

    lat_hybrid, _ = searched("hybrid_rrf")
    lat_default, _ = searched(DEFAULT_RECIPE)  # what recall runs unless told otherwise
    lat_vector, approx = searched("vector_only")  # the vector leg as the pipeline runs it, alone
    lat_key, _ = searched(DEFAULT_RECIPE, key_named)
    lat_graph, _ = searched(DEFAULT_RECIPE, graph_named)
    # the same two without the fact_id B-tree: what the index saves those reads
    fact_index = next(ix.name for ix in index.table.list_indices() if list(ix.columns) == ["fact_id"])
    index.table.drop_index(fact_index)
    lat_key_scan, _ = searched(DEFAULT_RECIPE, key_named)
    lat_graph_scan, _ = searched(DEFAULT_RECIPE, graph_named)
    lat_exact, exact = [], []
    for _, qv, tenant, as_of in cases:
        t0 = time.perf_counter()
        exact.append(exact_top(arrays, qv, tenant, micros(as_of), 10))
        lat_exact.append((time.perf_counter() - t0) * 1000)
    lat_exact, exact = lat_exact[WARMUP:], exact[WARMUP:]
    recalls = [len(set(a) & set(e)) / max(1, len(e)) for a, e in zip(approx, exact)]
    p = lambda xs, q: float(np.percentile(xs, q))  # noqa: E731
    row = {
        "rows": n,
        "embed_texts_per_s": round(n / embed_s),
        "ingest_rows_per_s": round(n / (embed_s + write_s)),
        "index_build_s": round(write_s + build_s, 2),
        "prewarm_s": round(prewarm_s, 2),
        "hybrid_p50_ms": round(p(lat_hybrid, 50), 2),
        "hybrid_p95_ms": round(p(lat_hybrid, 95), 2),
        "default_p50_ms": round(p(lat_default, 50), 2),
        "default_p95_ms": round(p(lat_default, 95), 2),
        "default_key_named_p50_ms": round(p(lat_key, 50), 2),
        "default_key_named_p95_ms": round(p(lat_key, 95), 2),
        "default_graph64_p50_ms": round(p(lat_graph, 50), 2),
        "default_graph64_p95_ms": round(p(lat_graph, 95), 2),
        "key_named_no_fact_index_p50_ms": round(p(lat_key_scan, 50), 2),
        "graph64_no_fact_index_p50_ms": round(p(lat_graph_scan, 50), 2),
        "vector_leg_p50_ms": round(p(lat_vector, 50), 2),
        "vector_leg_p95_ms": round(p(lat_vector, 95), 2),
        "numpy_exact_p50_ms": round(p(lat_exact, 50), 2),
        "numpy_exact_p95_ms": round(p(lat_exact, 95), 2),
        "vector_recall_at_10": round(float(np.mean(recalls)), 4),
    }
    row["exact_over_hybrid_p50"] = round(row["numpy_exact_p50_ms"] / row["hybrid_p50_ms"], 2)
    row["exact_over_hybrid_p95"] = round(row["numpy_exact_p95_ms"] / row["hybrid_p95_ms"], 2)
    row["exact_over_default_p50"] = round(row["numpy_exact_p50_ms"] / row["default_p50_ms"], 2)
    row["exact_over_default_p95"] = round(row["numpy_exact_p95_ms"] / row["default_p95_ms"], 2)
    row["key_named_over_default_p50"] = round(row["default_key_named_p50_ms"] / row["default_p50_ms"], 2)
    row["graph64_over_default_p50"] = round(row["default_graph64_p50_ms"] / row["default_p50_ms"], 2)
    row["exact_over_vector_leg_p50"] = round(row["numpy_exact_p50_ms"] / row["vector_leg_p50_ms"], 2)
    say(json.dumps(row))
    gc.unfreeze()
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m evals.bench_search", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--home", help="memory home whose models/ caches the static embedder (default: ./.memory)")
    parser.add_argument("--work", help="scratch folder for the indexes (default: a temporary folder)")
    parser.add_argument("--out", help="write the result rows as JSON here")
    args = parser.parse_args(argv)
    home = resolve_home(args.home)
    embedder = make_embedder("static", cache_dir=home / "models")
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="memcore-bench-"))
    probe = sentences(20_000, seed=1)
    embedder.embed(probe[:10])  # load the model before timing
    t0 = time.perf_counter()
    embedder.embed(probe)
    print(f"static embedder: {len(probe) / (time.perf_counter() - t0):,.0f} texts/s ({embedder.name})")
    rows = [bench_size(int(s), embedder, work, args.queries, print) for s in args.sizes.split(",")]
    print()
    header = [
        "rows",
        "hybrid_p50_ms",
        "hybrid_p95_ms",
        "numpy_exact_p50_ms",
        "numpy_exact_p95_ms",
        "exact_over_hybrid_p95",
        "default_p50_ms",
        "default_p95_ms",
        "exact_over_default_p95",
        "vector_recall_at_10",
        "index_build_s",
        "ingest_rows_per_s",
    ]
    print(" | ".join(header))
    for r in rows:
        print(" | ".join(str(r[h]) for h in header))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=2))
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
