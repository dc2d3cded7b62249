"""The two ways the store appends version rows (one VALUES insert for a few rows, a staged Arrow
table for many) store exactly the same rows: every field reads back the same."""

from __future__ import annotations

import dataclasses
import json
from datetime import timedelta

import duckdb
import pytest

from memory_core.adapters.duckdb import DuckDBHome
from memory_core.adapters.duckdb.versions import ARROW_INSERT_ABOVE
from memory_core.audit import AuditEntry
from memory_core.graph.model import Relation
from memory_core.identity import Namespace, Scope
from memory_core.model import FactVersion, Kind, Op, Provenance, Status
from memory_core.ports import KeyChange, WriteBatch
from tests.conftest import T0

NS = Namespace("acme", Scope.USER, "ana")
PLAIN = Provenance(tenant="acme", actor="agent:a", origin="tool")
QUOTED = Provenance(
    tenant="acme",
    actor="agent:b",
    origin="extraction",
    session="s1",
    run="r1",
    agent="x",
    model="m",
    source_quote="I moved to Lisbon",
    source_turn="D1:3",
    source_span=(4, 21),
    compaction_generation=2,
)
# A capture's envelope and a reviewer's affirmation: attrs keys a row has only where it holds them.
ENVELOPED = Provenance(
    tenant="acme",
    actor="agent:c",
    origin="capture",
    lens_id="developer",
    frame_id="fr1",
    actor_chain=("agent:relay", "agent:c"),
    author="Ana",
    source="standup notes",
)
JUDGED = dataclasses.replace(ENVELOPED, judged_by="user:rev", judged_at=T0 + timedelta(hours=3))


def rows(n: int, *, varied: bool, envelope: str = "none") -> list[FactVersion]:
    """``envelope``: "none"; "some" (every third row carries ``ENVELOPED``), "judged" (``JUDGED``);
    "all" (every row ``ENVELOPED``)."""
    out = []
    for i in range(n):
        odd = varied and i % 2 == 1
        enveloped = envelope == "all" or (envelope in ("some", "judged") and i % 3 == 0)
        out.append(
            FactVersion(
                id=f"v{i:03d}",
                fact_id=f"f{i:03d}",
                tenant=NS.tenant,
                scope=NS.scope,
                owner_id=NS.owner_id,
                key=f"k{i % 7}",
                value_json=f'"value {i} é"',
                content_sha256=f"{i:064x}",
                kind=Kind.FACT if i % 3 else Kind.NOTE,
                memory_type="general",
                status=Status.ACTIVE if i % 4 else Status.SUPERSEDED,
                op=Op.SET,
                version=i + 1,
                change_id=f"c{i}",
                observed_at=None if i % 5 else T0,
                valid_at=T0 + timedelta(days=i),
                invalid_at=T0 + timedelta(days=i + 1) if i % 4 == 0 else None,
                created_at=T0 + timedelta(seconds=i),
                superseded_by=f"v{i + 1:03d}" if i % 4 == 0 else None,
                reinforcement_count=i % 3,
                provenance=(JUDGED if envelope == "judged" else ENVELOPED) if enveloped else QUOTED if odd else PLAIN,
                changed_by="agent:c" if odd else "agent:a",
                subject="Ana" if odd else None,
                index_context="moving" if i % 6 == 0 else None,
                source_class="derived" if odd else "stated",
                sensitivity="low" if i % 9 == 0 else "normal",
                expires_at=T0 + timedelta(days=90) if i % 8 == 0 else None,
                on_expire="demote" if odd else "tombstone",
                locked=i % 10 == 0,
                pinned=i % 11 == 0,
                confidence=0.5 + (i % 5) / 10,
                conflict_with=(f"f{i + 1:03d}", f"f{i + 2:03d}") if i % 6 == 1 else (),
                relations=(Relation("ana", "lives_in", "lisbon", valid_at=T0, subject_type="person"),)
                if i % 5 == 2
                else (),
            )
        )
    return out


def stored(tmp_path, name: str, batches: list[list[FactVersion]]) -> dict[str, list[FactVersion]]:
    store = DuckDBHome.open(tmp_path / name)
    try:
        for batch in batches:
            audit = AuditEntry(
                at=T0,
                tenant=NS.tenant,
                scope=NS.scope.value,
                owner_id=NS.owner_id,
                key="*",
                op="bulk_set",
                version_ids=",".join(r.id for r in batch),
                content_sha256=None,
                actor="agent:a",
            )
            by_key: dict[str, list[FactVersion]] = {}
            for row in batch:
                by_key.setdefault(row.key, []).append(row)
            store.versions.apply(WriteBatch(tuple(KeyChange(NS, k, tuple(v)) for k, v in by_key.items()), (audit,)))
        return {f"k{k}": store.versions.history(NS, f"k{k}") for k in range(7)}
    finally:
        store.close()


@pytest.mark.parametrize(
    ("varied", "envelope"),
    [(True, "none"), (False, "none"), (True, "some"), (True, "judged"), (False, "all")],
    ids=["mixed-provenance", "one-provenance", "some-enveloped", "some-judged", "all-enveloped"],
)
def test_arrow_insert_stores_what_the_row_insert_stores(tmp_path, varied, envelope):
    written = rows(ARROW_INSERT_ABOVE + 9, varied=varied, envelope=envelope)
    staged = stored(tmp_path, "staged", [written])  # one batch: the Arrow path
    one_by_one = stored(tmp_path, "rows", [[r] for r in written])  # one row a batch: the VALUES path
    assert staged == one_by_one
    assert sum(len(v) for v in staged.values()) == len(written)
    by_id = {r.id: r for r in written}
    assert all(r == by_id[r.id] for history in staged.values() for r in history)


def test_a_row_without_an_envelope_stores_the_same_attrs_either_way(tmp_path):
    """The staged insert of a batch that holds envelopes leaves its other rows' attrs text as a
    point write stores it: no optional key, not even as null."""
    written = rows(ARROW_INSERT_ABOVE + 9, varied=True, envelope="judged")
    texts = {}
    for name, batches in (("staged", [written]), ("rows", [[r] for r in written])):
        stored(tmp_path, name, batches)
        with duckdb.connect(str(tmp_path / name / "memory.duckdb"), read_only=True) as con:
            texts[name] = dict(con.execute("SELECT id, attrs FROM memory_versions").fetchall())
    plain = [i for i, r in enumerate(written) if r.provenance is not JUDGED]
    for i in plain:
        staged, one = json.loads(texts["staged"][written[i].id]), json.loads(texts["rows"][written[i].id])
        assert staged == one and not any(k in staged for k in ("prov_lens", "prov_judged_by", "prov_actor_chain"))


def test_a_bulk_rewrite_of_captured_facts_keeps_their_envelope(home, clock):
    """``clear`` closes every fact of a scope in one batch (many rows: the staged insert); each
    closing row keeps the lens, author and source its capture was made with, on disk."""
    from memory_core import Identity, Memory
    from tests.lens_home import fill_lens_home

    identity = Identity(tenant="acme", user="ana", agent="bob", session="s1")
    with Memory.open(home, clock=clock) as memory:
        fill_lens_home(memory)
        bob = memory.for_run(identity)
        keys = [
            bob.capture("svc", f"claim {i} about svc", lens_id="developer", author="Ana", source="notes").key
            for i in range(ARROW_INSERT_ABOVE + 4)
        ]
        assert len(bob.clear().rows) > ARROW_INSERT_ABOVE
    with Memory.open(home, clock=clock) as memory:  # read back from the file, not a cache
        for key in keys:
            closing = memory.for_run(identity).history(key)[-1]
            assert closing.status == Status.TOMBSTONED
            p = closing.provenance
            assert (p.lens_id, p.author, p.source, p.actor_chain) == ("developer", "Ana", "notes", ("agent:bob",))
