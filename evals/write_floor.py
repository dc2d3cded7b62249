"""The floor under a bulk write on this machine: only the work no implementation can skip.

For each entry: the shape check, the key check, canonical JSON, its SHA-256, the sensitivity
scan and two random ids; then one cold embedding of every (index text, value) pair, one Arrow
table of version rows, one DuckDB transaction inserting it, and one Lance write of the index rows
with its text index. No verdicts, no row objects, no caches, no audit chain, no result: what a
purely columnar ``bulk_set`` would still have to do. ``bench_write`` runs it beside the real
``bulk_set`` so the gap between the two is measured, not guessed.
"""

from __future__ import annotations

import gc
import hashlib
import os
import time
from pathlib import Path
from typing import Any, Sequence

import duckdb
import numpy as np
import pyarrow as pa

from memory_core.adapters.duckdb.schema import DDL
from memory_core.adapters.duckdb.staging import STAGED_INSERT, arrow_versions
from memory_core.adapters.embedders import make_embedder
from memory_core.adapters.lance import LanceIndex
from memory_core.adapters.lance.read import DERIVED_COLUMNS, live_spans
from memory_core.adapters.lance.rows import schema as index_schema
from memory_core.model import FactVersion
from memory_core.texts import index_text
from memory_core.values import canonical_json
from memory_core.write.sensitivity import detect
from memory_core.write.settle import validate_key


def _repeat(column: pa.ChunkedArray, n: int) -> pa.Array:
    value = column[0]
    return pa.nulls(n, column.type) if not value.is_valid else pa.repeat(value, n)


def columnar_floor(
    folder: Path, entries: Sequence[dict[str, Any]], template: FactVersion, cache: Path
) -> dict[str, float]:
    """Seconds per step and in all. ``template`` supplies the columns every row shares. The cycle
    collector is off while it runs, as it is inside ``bulk_set``."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _floor(folder, entries, template, cache)
    finally:
        if collecting:
            gc.enable()


def _floor(folder: Path, entries: Sequence[dict[str, Any]], template: FactVersion, cache: Path) -> dict[str, float]:
    embedder = make_embedder("static", cache_dir=cache)
    embedder.embed(["warm up"])  # loaded, its token cache cold
    con = duckdb.connect(str(folder / "floor.duckdb"))
    con.execute("SET TimeZone = 'UTC'")
    con.execute(DDL)
    n, steps = len(entries), {}
    started = step = time.perf_counter()
    keys, values, canonical, digests, tiers, ids, change_ids = [], [], [], [], [], [], []
    for entry in entries:
        if type(entry) is not dict or len(entry) != 2:
            raise ValueError("the floor takes {key, value} entries only")
        value = entry["value"]
        text = canonical_json(value)
        keys.append(validate_key(entry["key"]))
        values.append(value)
        canonical.append(text)
        digests.append(hashlib.sha256(text.encode("utf-8")).hexdigest())
        tiers.append(detect(value))
        ids.append(os.urandom(16).hex())
        change_ids.append(os.urandom(16).hex())
    steps["validate"], step = time.perf_counter() - step, time.perf_counter()
    pairs = [(index_text(k, v), v) for k, v in zip(keys, values)]
    index_vectors, _ = embedder.embed_pairs(pairs)
    steps["embed"], step = time.perf_counter() - step, time.perf_counter()
    shared = arrow_versions(1, [template])
    columns = {name: _repeat(shared.column(name), n) for name in shared.column_names}
    columns.update(
        seq=pa.array(np.arange(1, n + 1)),
        id=pa.array(ids),
        fact_id=pa.array(ids),
        change_id=pa.array(change_ids),
        key=pa.array(keys),
        value_json=pa.array(canonical),
        content_sha256=pa.array(digests),
        sensitivity=pa.array(tiers),
    )
    staged = pa.table(columns)
    steps["arrow"], step = time.perf_counter() - step, time.perf_counter()
    con.execute("BEGIN")
    con.register("incoming", staged)
    con.execute(STAGED_INSERT.format(source="incoming"))
    con.execute("COMMIT")
    steps["duckdb"], step = time.perf_counter() - step, time.perf_counter()
    target = index_schema(embedder.dim)
    stored: dict[str, pa.Array] = {}
    for field in target:
        if field.name == "vector":
            stored["vector"] = pa.FixedSizeListArray.from_arrays(pa.array(index_vectors.ravel()), embedder.dim)
        elif field.name in DERIVED_COLUMNS:
            continue
        elif field.name == "version_id":
            stored[field.name] = columns["id"]
        elif field.name == "text":
            stored[field.name] = pa.array([p[0] for p in pairs])
        elif field.name in columns and pa.types.is_timestamp(columns[field.name].type):
            stored[field.name] = columns[field.name].cast(pa.int64())
        elif field.name in columns:
            stored[field.name] = columns[field.name].cast(field.type)
        else:  # namespace and provenance: one value for the whole batch
            stored[field.name] = pa.repeat(pa.scalar(field.name), n)
    # The derived column is part of every index row: made the way the write path makes it.
    stored["live_span"] = live_spans(stored["valid_at"], stored["invalid_at"], stored["expires_at"])
    index_columns = [stored[field.name] for field in target]
    LanceIndex(folder / "floor-lance", embedder.name, embedder.dim).add(
        pa.Table.from_arrays(index_columns, schema=target)
    )
    steps["index"] = time.perf_counter() - step
    steps["total"] = time.perf_counter() - started
    con.close()
    return steps
