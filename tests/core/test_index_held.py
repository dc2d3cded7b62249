"""The vector leg from held vectors (``adapters.lance.held``) answers what Lance answers.

Lance compares every row of a table without a vector index, so on these small tables its answer
is the exact one: the held leg must name the same rows, in the same order, at the same distances,
whatever was written in between (appends it held from what it wrote, states that hide their
older rows, deletes, folds of small fragments, compactions); and it must step aside (None) where
it cannot answer from memory."""

from __future__ import annotations

from datetime import timedelta

import lance
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core.adapters.lance import LanceIndex
from memory_core.adapters.lance.filters import render
from memory_core.adapters.lance.held import HeldFilter, HeldVectorCache, held_parts
from memory_core.adapters.lance.read import ResidentColumns
from memory_core.adapters.lance.rows import index_rows, namespace_key, schema
from memory_core.adapters.lance.search import LanceSearch
from memory_core.identity import Namespace, Scope
from memory_core.model import Kind
from memory_core.retrieval.filters import LegFilter
from memory_core.retrieval.rows import LEG_COLUMNS
from tests.conftest import T0

DIM = 8
OWNERS = ("ana", "bo", "cy")
BUDGET = 1 << 20


def _rows(ids, generation: int, seed: int) -> pa.Table:
    """Rows of fact ids ``ids`` spread over three owners and two kinds; ``generation`` makes a
    new state (a new version id, a new vector) of the same facts."""
    rng = np.random.default_rng(seed)
    n = len(ids)
    columns = {f.name: [f"{f.name}-{i}-{generation}" for i in ids] for f in schema(DIM) if pa.types.is_string(f.type)}
    owners = [OWNERS[i % 3] for i in ids]
    moments = [T0 - timedelta(days=int(d)) for d in rng.integers(1, 900, n)]
    columns.update(
        fact_id=[f"f{i}" for i in ids],
        tenant=["acme"] * n,
        scope=["user"] * n,
        owner_id=owners,
        namespace=[namespace_key("acme", "user", o) for o in owners],
        kind=["note" if i % 4 == 0 else "fact" for i in ids],
        status=["active"] * n,
        text=[f"note {i}" for i in ids],
        valid_at=moments,
        created_at=moments,
        observed_at=moments,
        invalid_at=[None] * n,
        expires_at=[None] * n,
        version=[generation] * n,
        reinforcement_count=[0] * n,
        confidence=[1.0] * n,
    )
    vectors = rng.standard_normal((n, DIM))
    vectors[::7] = 0  # a zero vector stands at distance 1 from every query
    return index_rows(columns, vectors, DIM)


def _where(owner: str, kinds: frozenset[Kind]) -> LegFilter:
    return LegFilter(Namespace("acme", Scope.USER, owner), kinds, T0, T0)


def _lance_answer(index: LanceIndex, vector: np.ndarray, where: LegFilter, limit: int) -> list[tuple[str, float]]:
    """Lance's own exact answer on this version, with the rows a newer state hides left out."""
    snapshot, served = index.served()
    rows = snapshot.vector_search(
        vector, render(where, full=False), limit + served.hidden, ["fact_id", "version_id"], nprobes=64
    )
    return [(r["fact_id"], r["_distance"]) for r in rows if served.admits(r)][:limit]


def _check(index: LanceIndex, seed: int) -> None:
    rng = np.random.default_rng(seed)
    reader = LanceSearch(index).reader()
    assert reader is not None
    for owner in OWNERS:
        for kinds in (frozenset({Kind.FACT}), frozenset({Kind.FACT, Kind.NOTE})):
            vector = rng.standard_normal(DIM).astype(np.float32)
            where = _where(owner, kinds)
            for limit in (3, 40):
                flat = HeldFilter(namespace_key("acme", "user", owner), tuple(sorted(k.value for k in kinds)))
                assert reader._snapshot.nearest_held(vector, flat, limit, LEG_COLUMNS) is not None, "answered here"
                held = reader.vector_leg(vector, where, limit, [*LEG_COLUMNS, "owner_id"], full=False)
                want = _lance_answer(index, vector, where, limit)
                assert [r["fact_id"] for r in held] == [f for f, _ in want]
                assert [r["_distance"] for r in held] == pytest.approx([d for _, d in want], abs=1e-5)
                assert all(set(LEG_COLUMNS) <= set(r) and r["owner_id"] == owner for r in held)


operations = st.lists(st.sampled_from(["append", "restate", "hold", "settle", "fold", "delete", "compact"]), max_size=7)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
def test_the_held_leg_names_what_lance_names_after_any_writes(tmp_path_factory, ops):
    index = LanceIndex(tmp_path_factory.mktemp("held"), "test", DIM)
    index.replace_all(_rows(range(30), generation=0, seed=0))
    index.prewarm(vector_budget_bytes=BUDGET)
    next_id, generation = 30, 0
    _check(index, seed=0)
    for step, op in enumerate(ops, start=1):
        live = sorted({int(f[1:]) for f in index.table.to_arrow().column("fact_id").to_pylist()})
        if op == "append":  # held from what was written once the upkeep holds it, else read back
            index.append_states(_rows(range(next_id, next_id + 5), generation, seed=step), {})
            next_id += 5
        elif op == "hold":
            index.hold_appended()
        elif op == "restate" and live:  # a newer state appended; the older row hidden until settled
            generation += 1
            chosen = live[step % 3 :: 4]
            rows = _rows(chosen, generation, seed=step)
            index.append_states(
                rows, dict(zip(rows.column("fact_id").to_pylist(), rows.column("version_id").to_pylist()))
            )
        elif op == "settle":  # the hidden rows deleted, the small fragments folded
            index.settle()
        elif op == "fold":
            index.compact_small()
        elif op == "delete" and len(live) > 2:
            index.delete_facts([f"f{i}" for i in live[1::5]])
        elif op == "compact":
            index.optimize(cleanup_older_than=None)
        _check(index, seed=step)


def test_the_held_leg_steps_aside_without_a_budget_or_past_its_rows(tmp_path):
    index = LanceIndex(tmp_path, "test", DIM)
    index.replace_all(_rows(range(30), generation=0, seed=0))
    index.prewarm()  # no budget: the vectors are not held
    snapshot = index.snapshot()
    flat = HeldFilter(namespace_key("acme", "user", "ana"), ("fact", "note"))
    vector = np.ones(DIM, dtype=np.float32)
    assert snapshot.nearest_held(vector, flat, 5, LEG_COLUMNS) is None
    index.prewarm(vector_budget_bytes=BUDGET)
    snapshot = index.snapshot()
    assert len(snapshot.nearest_held(vector, flat, 5, LEG_COLUMNS)) == 5
    resident = index._source.resident
    assert held_parts(resident, snapshot.dataset, flat, max_rows=9) is None  # ana has 10
    assert held_parts(resident, snapshot.dataset, flat, max_rows=10) is not None
    # a budget the table outgrows: the vectors let go, the leg left to Lance
    index.prewarm(vector_budget_bytes=20 * DIM * 4)
    assert index.snapshot().nearest_held(vector, flat, 5, LEG_COLUMNS) is None


def test_an_appended_fragment_is_held_as_its_files_hold_it(tmp_path):
    """Held from the rows written, not read back: the same values as a read of the files."""
    index = LanceIndex(tmp_path, "test", DIM)
    index.replace_all(_rows(range(30), generation=0, seed=0))
    index.prewarm(vector_budget_bytes=BUDGET)
    index.append_states(_rows(range(30, 36), generation=0, seed=1), {})
    assert index.hold_appended() == 1
    assert index.hold_appended() == 0  # each append once
    snapshot = index.snapshot()
    resident = index._source.resident
    newest = max(snapshot.dataset.get_fragments(), key=lambda f: f.fragment_id)
    held = resident._fragments[newest.fragment_id]
    read = ResidentColumns()._load(newest, held.files, sorted(held.columns))
    assert {"vector", "namespace", "kind", "fact_id"} <= set(held.columns)
    for name, column in held.columns.items():
        assert column.to_pylist() == read.columns[name].to_pylist(), name


def test_the_cache_keeps_within_its_bytes(tmp_path):
    cache = HeldVectorCache()
    cache.max_bytes = 3 * 800
    for key in range(5):
        assert cache.get(key, lambda: np.zeros(100)).nbytes == 800  # answered, kept or not
    assert cache._bytes <= cache.max_bytes and len(cache._entries) == 3
    assert cache.get("big", lambda: np.zeros(1000)).shape == (1000,)
    assert "big" not in cache._entries  # larger than the whole budget: answered, not kept


def test_rows_that_do_not_fit_the_table_are_read_back_not_held(tmp_path, caplog):
    """Holding an append from its rows only saves a read: rows that will not take the table's
    types are left for a search to read, and the append stands."""
    index = LanceIndex(tmp_path, "test", DIM)
    index.replace_all(_rows(range(30), generation=0, seed=0))
    index.prewarm(vector_budget_bytes=BUDGET)
    index.snapshot()
    rows = _rows(range(30, 33), generation=0, seed=1)
    committed = lance.write_dataset(rows, index._source.uri, mode="append")
    odd = rows.set_column(rows.schema.get_field_index("fact_id"), "fact_id", pa.array([[1], [2], [3]]))
    index._source.appended(committed, odd)
    assert index.hold_appended() == 0
    assert "read back instead of held" in caplog.text
    newest = max(index.snapshot().dataset.get_fragments(), key=lambda f: f.fragment_id)
    assert newest.fragment_id not in index._source.resident._fragments
    _check(index, seed=1)  # and searched alike, the fragment loaded by the search
