"""A search leg's per-candidate columns come from memory (``ResidentColumns``), held per fragment
across versions of the table. Whatever was written in between (appends, updates, deletes,
compaction, a table overwritten and numbered again from fragment 0, a column added), a leg row
and a take must say exactly what the table's files say for that row in that version."""

from __future__ import annotations

from datetime import timedelta

import lance
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core.adapters.lance import LanceIndex
from memory_core.adapters.lance.read import DERIVED_COLUMNS, IndexSnapshot, ResidentColumns
from memory_core.adapters.lance.rows import index_rows, namespace_key, schema
from memory_core.environment import LANCE_THREADS_ENV, lance_compute_threads
from memory_core.retrieval.rows import HIT_COLUMNS, LEG_COLUMNS
from memory_core.temporal import micros
from tests.conftest import T0

DIM = 8
WORDS = ["river", "cat", "piano", "flat", "job", "dog", "walk", "lessons"]
CHECKED = list(dict.fromkeys([*LEG_COLUMNS, "observed_at", *HIT_COLUMNS]))
NAMESPACE = namespace_key("acme", "user", "ana")


def _rows(ids, generation: int, seed: int) -> pa.Table:
    """Index rows for fact ids ``ids``; ``generation`` changes every value a row holds."""
    rng = np.random.default_rng(seed)
    n = len(ids)
    columns = {f.name: [f"{f.name}-{i}-{generation}" for i in ids] for f in schema(DIM) if pa.types.is_string(f.type)}
    columns.update(
        fact_id=[f"f{i}" for i in ids],
        tenant=["acme"] * n,
        scope=["user"] * n,
        owner_id=["ana"] * n,
        namespace=[NAMESPACE] * n,
        kind=["fact"] * n,
        status=["active"] * n,
        text=[f"{WORDS[(i + generation) % 8]} {WORDS[i % 8]} note {i}" for i in ids],
    )
    moments = [T0 - timedelta(days=int(d)) for d in rng.integers(1, 900, n)]
    columns.update(
        valid_at=moments,
        created_at=moments,
        observed_at=moments,
        invalid_at=[None if j % 3 else T0 + timedelta(days=generation + 1) for j in range(n)],
        expires_at=[None] * n,
        version=[generation] * n,
        reinforcement_count=[0] * n,
        confidence=[1.0 / (1 + generation)] * n,
    )
    return index_rows(columns, rng.standard_normal((n, DIM)), DIM)


def _truth(snapshot: IndexSnapshot) -> dict[int, dict]:
    table = snapshot.dataset.to_table(columns=CHECKED, with_row_id=True)
    return {row.pop("_rowid"): row for row in table.to_pylist()}


def _vectors(snapshot: IndexSnapshot) -> dict[int, np.ndarray]:
    table = snapshot.dataset.to_table(columns=["vector"], with_row_id=True)
    rows = table.column("vector").to_numpy(zero_copy_only=False)
    return dict(zip(table.column("_rowid").to_pylist(), rows))


def _check(index: LanceIndex) -> None:
    snapshot = index.snapshot()
    truth = _truth(snapshot)
    where = f"namespace = '{NAMESPACE}'"
    legs = [
        *snapshot.vector_search(
            np.ones(DIM, dtype=np.float32), where, len(truth) + 5, [*LEG_COLUMNS, "observed_at"], nprobes=64
        ),
        *snapshot.fts_search("river cat piano flat job dog walk lessons", where, len(truth) + 5, LEG_COLUMNS),
    ]
    assert {r["_rowid"] for r in legs[: len(truth)]} == set(truth)  # every live row, each once
    for row in legs:
        want = truth[row["_rowid"]]
        assert {c: row[c] for c in LEG_COLUMNS} == {c: want[c] for c in LEG_COLUMNS}
    # the lexical leg of a score-fusing recipe reads each candidate's vector: held or not, the files'
    vectors = _vectors(snapshot)
    lexical = snapshot.fts_search("river cat piano", where, len(truth), ["fact_id", "vector"])
    assert lexical and all(np.array_equal(r["vector"], vectors[r["_rowid"]]) for r in lexical)
    ids = list(truth)[::-1]
    taken = snapshot.take(ids, HIT_COLUMNS)
    assert taken == [{c: truth[i][c] for c in HIT_COLUMNS} for i in ids]


operations = st.lists(
    st.sampled_from(["append", "update", "delete", "compact", "overwrite", "prewarm", "prewarm_vectors"]),
    min_size=1,
    max_size=7,
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations, eager_rows=st.sampled_from([65_536, 6]))
def test_leg_rows_and_takes_say_what_the_files_say_after_any_writes(tmp_path_factory, ops, eager_rows):
    """With ``eager_rows`` 6, a 12-row fragment is read from the files for its first reads and
    held after, while small appends are held at once: one search mixes both."""
    resident = ResidentColumns(eager_rows=eager_rows, load_after=4)
    _check_after(tmp_path_factory.mktemp("resident"), ops, resident)


def _check_after(folder, ops, resident: ResidentColumns) -> None:
    index = LanceIndex(folder, "test", DIM, resident=resident)
    index.replace_all(_rows(range(12), generation=0, seed=0))
    next_id, generation = 12, 0
    _check(index)
    for step, op in enumerate(ops, start=1):
        live = sorted(int(f[1:]) for f in index.table.to_arrow().column("fact_id").to_pylist())
        if op == "append":
            index.add(_rows(range(next_id, next_id + 5), generation, seed=step))
            next_id += 5
        elif op == "update" and live:  # the rows move to a new fragment; their old places are deleted
            generation += 1
            index.upsert(_rows(live[::2], generation, seed=step))
        elif op == "delete" and len(live) > 2:
            index.delete_facts([f"f{i}" for i in live[1::3]])
        elif op == "compact":  # new fragments, new ids
            index.optimize(cleanup_older_than=None)
        elif op == "overwrite":  # numbered from fragment 0 again, other files, other values
            generation += 1
            index.replace_all(_rows(range(next_id, next_id + 9), generation, seed=step))
            next_id += 9
        elif op == "prewarm":  # the wide columns of a hit too, for the fragments there are now
            index.prewarm()
        elif op == "prewarm_vectors":  # and the vectors, within a budget the table outgrows in a few appends
            index.prewarm(vector_budget_bytes=40 * DIM * 4)
        _check(index)


def test_a_column_added_to_a_fragment_is_read_after_it_was_held_without_it(tmp_path):
    """upgrade_layout adds live_span to the same fragments (same ids): a fragment held before
    must not be taken for the new layout's."""
    index = LanceIndex(tmp_path, "test", DIM)
    index.replace_all(_rows(range(10), generation=0, seed=0))
    index.table.drop_columns(list(DERIVED_COLUMNS))
    _check(index)  # held: the three time columns, read column by column
    assert index.upgrade_layout()
    _check(index)


def test_a_table_made_anew_is_not_read_from_the_fragments_held_for_the_old_one(tmp_path):
    """Dropped and made again (another process may), a table numbers its fragments from 0 once
    more: a fragment is known by its files, not its id alone."""
    resident = ResidentColumns()
    for generation in (0, 1):
        path = tmp_path / f"table-{generation}.lance"
        lance.write_dataset(_rows(range(6), generation, seed=generation), path)
        snapshot = IndexSnapshot(lance.dataset(path), resident)
        assert [f.fragment_id for f in snapshot.dataset.get_fragments()] == [0]
        if generation == 0:  # held with a hit's wide columns, as prewarm holds them
            resident.load(snapshot.dataset, ["fact_id", "key", "text"])
        truth = _truth(snapshot)
        ids = sorted(truth)  # a held column alone, before any leg reads the fragment again
        assert snapshot.take(ids, ["key"]) == [{"key": truth[i]["key"]} for i in ids]
        rows = snapshot.fts_search(
            "river cat piano flat job dog walk lessons", f"namespace = '{NAMESPACE}'", 10, [*LEG_COLUMNS, "observed_at"]
        )
        assert len(rows) == 6
        assert all(r["invalid_at"] == truth[r["_rowid"]]["invalid_at"] for r in rows)
        assert snapshot.take([r["_rowid"] for r in rows], ["version_id", "key"]) == [
            {"version_id": f"version_id-{r['fact_id'][1:]}-{generation}", "key": f"key-{r['fact_id'][1:]}-{generation}"}
            for r in rows
        ]


def test_a_large_fragment_is_read_from_the_files_until_searches_keep_coming_back(tmp_path):
    """A one-off search on a large home reads its rows; a process that keeps searching holds
    the fragment after ``load_after`` reads. Answers alike either way."""
    index = LanceIndex(tmp_path, "test", DIM, resident=ResidentColumns(eager_rows=8, load_after=5))
    index.replace_all(_rows(range(12), generation=0, seed=0))
    index.add(_rows(range(12, 15), generation=0, seed=1))
    resident = index._source.resident
    _check(index)  # two legs and a take: three reads of the large fragment
    assert sorted(resident._fragments) == [1]  # only the small one
    _check(index)
    assert sorted(resident._fragments) == [0, 1]


def test_prewarm_holds_the_columns_of_every_fragment(tmp_path):
    index = LanceIndex(tmp_path, "test", DIM)
    index.replace_all(_rows(range(10), generation=0, seed=0))
    index.add(_rows(range(10, 14), generation=0, seed=1))
    resident = index._source.resident
    assert resident.nbytes() == 0
    assert index.prewarm() > 0
    assert sorted(resident._fragments) == [f.fragment_id for f in index.snapshot().dataset.get_fragments()]
    _check(index)
    snapshot = index.snapshot()
    truth = _truth(snapshot)
    ids = list(truth)[::-2]

    def no_file_reads(*args, **kwargs):
        raise AssertionError("a take after prewarm read the files")

    snapshot.dataset._take_rows = no_file_reads  # every column of a hit is held now
    assert snapshot.take(ids, HIT_COLUMNS) == [{c: truth[i][c] for c in HIT_COLUMNS} for i in ids]


def test_a_table_with_stable_row_ids_is_read_through_the_query(tmp_path):
    """There a row id is not the row's address: nothing is looked up in memory by it."""
    data = _rows(range(6), generation=0, seed=0)
    dataset = lance.write_dataset(data, tmp_path / "t.lance", enable_stable_row_ids=True)
    dataset.delete("fact_id = 'f0'")
    dataset = lance.dataset(tmp_path / "t.lance")
    resident = ResidentColumns()
    snapshot = IndexSnapshot(dataset, resident)
    assert not snapshot.resident
    rows = snapshot.fts_search("river cat piano flat job dog", f"namespace = '{NAMESPACE}'", 10, LEG_COLUMNS)
    truth = _truth(snapshot)
    assert rows and all(r["fact_id"] == truth[r["_rowid"]]["fact_id"] for r in rows)
    assert resident.nbytes() == 0


def test_a_write_between_the_legs_and_the_take_is_seen_by_the_take(tmp_path):
    """Completed from the latest version: a fact deleted since is not answered, a fact changed
    since shows its new row."""
    index = LanceIndex(tmp_path, "test", DIM)
    index.replace_all(_rows(range(8), generation=0, seed=0))
    snapshot = index.snapshot()
    legs = snapshot.fts_search(
        "river cat piano flat job dog walk lessons", f"namespace = '{NAMESPACE}'", 20, LEG_COLUMNS
    )
    assert len(legs) == 8
    legs_invalid_at = {r["fact_id"]: r["invalid_at"] for r in legs}
    index.delete_facts(["f1"])
    index.upsert(_rows([2], generation=1, seed=1))
    index.hydrate(legs, HIT_COLUMNS, read_at=snapshot)
    by_id = {r["fact_id"]: r for r in legs}
    assert by_id["f1"].get("_gone") and not by_id["f3"].get("_gone")
    assert by_id["f2"]["key"] == "key-2-1" and by_id["f3"]["key"] == "key-3-0"
    # the changed fact's time is its new row's, not the one its leg row was found with
    assert by_id["f2"]["invalid_at"] == micros(T0 + timedelta(days=2)) != legs_invalid_at["f2"]
    fresh = index.snapshot().fts_search(
        "river cat piano flat job dog walk lessons", f"namespace = '{NAMESPACE}'", 20, LEG_COLUMNS
    )
    index.hydrate(fresh, HIT_COLUMNS, read_at=index.snapshot())  # nothing written since: from memory
    assert {r["fact_id"]: r["key"] for r in fresh} == {
        f"f{i}": f"key-{i}-{1 if i == 2 else 0}" for i in (0, 2, 3, 4, 5, 6, 7)
    }


@pytest.mark.parametrize("given_value, expected", [(None, "cores"), ("", "cores"), ("  ", "cores"), ("3", "3")])
def test_lance_gets_a_compute_thread_per_core_unless_told(given_value, expected):
    import os

    environ = {} if given_value is None else {LANCE_THREADS_ENV: given_value}
    lance_compute_threads(environ)
    assert environ[LANCE_THREADS_ENV] == (str(os.cpu_count() or 1) if expected == "cores" else expected)


def test_vectors_are_held_within_the_budget_and_let_go_once_the_table_outgrows_it(tmp_path):
    """``prewarm(vector_budget_bytes=...)``: while every row's vector fits, the lexical leg reads
    its candidates' vectors from memory, not from the files; past the budget they are read from
    the files again and the vectors held are let go. Answers alike either way."""
    index = LanceIndex(tmp_path, "test", DIM)
    index.replace_all(_rows(range(10), generation=0, seed=0))
    resident = index._source.resident
    index.prewarm(vector_budget_bytes=0)
    assert not any("vector" in f.columns for f in resident._fragments.values())
    index.prewarm(vector_budget_bytes=16 * DIM * 4)  # room for 16 rows
    assert all("vector" in f.columns for f in resident._fragments.values())
    snapshot = index.snapshot()
    asked: list[list[str]] = []
    to_table = snapshot.dataset.to_table

    def recording(*args, **kwargs):
        asked.append(list(kwargs.get("columns") or []))
        return to_table(*args, **kwargs)

    snapshot.dataset.to_table = recording
    where = f"namespace = '{NAMESPACE}'"
    rows = snapshot.fts_search("river cat piano", where, 10, ["fact_id", "vector"])
    assert rows and asked and all("vector" not in columns for columns in asked)
    vectors = _vectors(snapshot)
    assert all(np.array_equal(r["vector"], vectors[r["_rowid"]]) for r in rows)
    index.add(_rows(range(10, 14), generation=0, seed=1))  # 14 rows: still within it
    _check(index)
    assert all("vector" in f.columns for f in resident._fragments.values())
    index.add(_rows(range(14, 20), generation=0, seed=2))  # 20 rows: past it
    _check(index)
    assert not any("vector" in f.columns for f in resident._fragments.values())
