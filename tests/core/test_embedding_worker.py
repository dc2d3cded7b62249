"""The embedding worker (docs/workers.md): facts the index lacks or holds stale are written in
bounded batches until none is left (then a run does nothing), a value the embedder refuses fails
alone and is parked after ``max_attempts``, and is tried again once it has been parked a while.
The refusing embedder is a port implementation (``Refusing``), injected at open."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.adapters.embedders import make_embedder
from memory_core.adapters.lance.mending import FILL_FAILED_CALLS
from memory_core.adapters.lance.rows import index_table
from memory_core.ports import IndexConsistency
from memory_core.services.embeddings import PARKED_FOR, plan_fill
from memory_core.values import canonical_json
from tests.conftest import T0

RUN = Identity(tenant="acme", user="ana", agent="helper")
REFUSED = "REFUSED"


class Refusing:
    """``Embedder``: the hashing embedder, but a batch holding a text with ``REFUSED`` fails (a
    value a provider rejects, say for its length or its content)."""

    def __init__(self) -> None:
        self.inner = make_embedder("hashing")
        self.name, self.dim = self.inner.name, self.inner.dim
        self.calls = 0
        self.down = False  # every call fails, as with a server that does not answer

    def embed(self, texts):
        self.calls += 1
        if self.down:
            raise ConnectionError("the embedding server does not answer")
        if any(REFUSED in t for t in texts):
            raise ValueError("the provider refused an input")
        return self.inner.embed(texts)


def written_without_an_embedder(home, clock, n=10, refused=()):
    """A home whose index holds one fact, and ``n`` facts written while no embedder was open."""
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        memory.for_run(RUN).set("seed", "an indexed fact")
    with Memory.open(home, clock=clock) as memory:
        tool = memory.for_run(RUN)
        return [
            tool.set(f"k{i}", f"fact number {i} {REFUSED if i in refused else ''}".strip()).version.fact_id
            for i in range(n)
        ]


def test_the_plan_takes_fewest_failures_first_and_parks_the_repeated_ones():
    report = IndexConsistency(
        facts=6, indexable=6, index_rows=2, missing=("a", "b", "c"), stale=("d",), pending_repair=("b", "e")
    )
    attempts = {"b": (1, T0), "c": (3, T0), "e": (1, T0)}
    plan = plan_fill(report, attempts, T0 + timedelta(hours=1), limit=3, max_attempts=3)
    assert plan.behind == ("a", "b", "c", "d") and plan.parked == ("c",)
    assert plan.batch == ("a", "d", "b") and plan.left == 1  # e (recorded, held as it should be) waits
    later = plan_fill(report, attempts, T0 + PARKED_FOR, limit=10, max_attempts=3)
    assert later.parked == () and later.batch[-1] == "c"  # parked long enough: tried again, last


def test_a_read_only_check_sees_what_was_written_without_an_embedder_and_batches_fill_it(home, clock):
    facts = written_without_an_embedder(home, clock)
    with Memory.open(home, clock=clock, read_only=True, embedder="hashing") as memory:
        seen = memory.fill_embeddings(apply=False, limit=4)
        assert seen["missing"] == 10 and seen["batch"] == 4 and seen["left"] == 6 and seen["filled"] == 0
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        # The projector's catch-up writes them at the first flush: the worker reports it, and finds
        # nothing left. (What the worker batches is what that mechanism leaves behind.)
        first = memory.fill_embeddings(limit=4)
        assert first["caught_up"] == 10 and first["missing"] == 0 and first["batch"] == 0
        assert memory.projector.consistency().ok
        assert {h.fact_id for h in memory.for_run(RUN).recall("fact number", k=20).hits} >= set(facts)


def test_a_refused_value_fails_alone_is_parked_and_is_tried_again_later(home):
    clock = FixedClock(T0)
    facts = written_without_an_embedder(home, clock, refused=(3, 7))
    refusing = Refusing()
    with Memory.open(home, clock=clock, embedder=refusing) as memory:
        # The catch-up writes all ten in one write, which the refused values fail as a whole: all
        # ten are recorded for repair. The one-shot repair fails on them again, every time.
        first = memory.fill_embeddings(limit=4)
        assert first["caught_up"] == 10 and first["failed_writes"] == 10 and first["batch"] == 4
        with pytest.raises(Exception, match="refused"):
            memory.repair_projections()
        runs = [first]
        while runs[-1]["batch"]:
            clock.set(clock.now() + timedelta(minutes=30))
            runs.append(memory.fill_embeddings(limit=4))
        assert sum(r["filled"] for r in runs) == 8
        last = runs[-1]
        refused = sorted(facts[i] for i in (3, 7))
        assert last["parked"] == 2 and last["parked_ids"] == refused and last["missing"] == 2
        assert memory.fill_embeddings(limit=4)["batch"] == 0  # parked: no run spends its batch on them
        report = memory.projector.consistency()
        assert report.missing == tuple(refused) and set(report.pending_repair) == set(refused)
    clock.set(clock.now() + PARKED_FOR)
    with Memory.open(home, clock=clock, embedder="hashing") as memory:  # the provider takes them now
        again = memory.fill_embeddings(limit=4)
        assert again["batch"] == 2 and again["filled"] == 2 and again["parked"] == 0
        assert memory.projector.consistency().ok
        assert memory.fill_embeddings()["batch"] == 0  # nothing left: idempotent


def test_a_stale_row_and_a_failed_write_are_rewritten_and_resolved(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        city = tool.set("city", "lives in Lisbon").version
        tool.set("pet", "a cat named Miso")
        memory.flush()
        index = memory.projector.index
        index.delete_facts([city.fact_id])
        leaked = dataclasses.replace(city, value_json=canonical_json("lives in Porto"))  # other content
        index.add(index_table([leaked], memory.embedder.embed(["lives in Porto"]), index.dim))
        assert memory.projector.consistency().stale == (city.fact_id,)
        report = memory.fill_embeddings()
        assert report["stale"] == 1 and report["filled"] == 1 and report["fact_ids"] == [city.fact_id]
        assert memory.projector.consistency().ok
        assert not tool.recall("Porto", recipe="bm25_only").hits


def test_an_embedder_that_fails_every_call_costs_a_bounded_number_of_calls(home, clock):
    facts = written_without_an_embedder(home, clock, n=40)
    refusing = Refusing()
    with Memory.open(home, clock=clock, embedder=refusing) as memory:
        refusing.down = True
        memory.flush()  # the catch-up fails as a whole: all forty recorded
        refusing.calls = 0
        run = memory.fill_embeddings(limit=40)
        assert refusing.calls == FILL_FAILED_CALLS  # not one call per fact, nor 2n for the split
        assert run["filled"] == 0 and 0 < run["failed"] < 40 and run["untried"] == 40 - run["failed"]
        refusing.down = False
        again = memory.fill_embeddings(limit=40)
        assert again["filled"] == 40 and again["parked"] == 0
        assert memory.projector.consistency().ok and not memory.store.projections.pending_projection_failures()
        assert {h.fact_id for h in memory.for_run(RUN).recall("fact number", k=50).hits} >= set(facts)
