"""The usage fold (docs/workers.md): what searches showed and what callers said of it, folded per
fact once (a second run folds nothing new), kept apart by tenant and namespace, and read back by
the ``hybrid_usage`` recipe's capped usage prior, never by the default recipe."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.identity import Namespace, Scope
from memory_core.retrieval.recipes import DEFAULT_RECIPE, RECIPES
from memory_core.retrieval.usage import USAGE_SATURATES, Answered, Exposure, UsageTotals, fold_usage, usage_signal
from memory_core.services.usage import LOOKBACK
from memory_core.session.search_memo import EXPOSURES_FLUSH_AT, Exposures
from tests.conftest import T0
from tests.faults import FailingCalls, FaultyStore, Killed
from tests.remember_setup import lensed

ANA = Identity(tenant="acme", user="ana", agent="helper")
BEN = Identity(tenant="acme", user="ben", agent="helper")
NS = Namespace("acme", Scope.USER, "ana")


def ref(hit) -> str:
    return f"{hit.kind.value}:{hit.fact_id}"


def twins(tool) -> tuple[str, str]:
    """Two notes a query matches equally (the same words; a note is not judged against its peers),
    so only a prior can order them."""
    a = tool.set("boat-a", "the harbour ferry leaves at nine", kind="note").version.fact_id
    b = tool.set("boat-b", "the harbour ferry leaves at nine", kind="note").version.fact_id
    tool.set("other", "tea is served at four in the garden")
    return a, b


# -- the decision (pure) -------------------------------------------------------------------------


def test_the_fold_counts_each_record_once_per_fact_and_never_across_tenants():
    other = Namespace("globex", Scope.USER, "zed")
    where = {"f1": NS, "f2": NS, "f3": other}
    exposures = [Exposure(NS, "f1", 3, T0), Exposure(NS, "gone", 5, T0)]
    answered = [
        Answered("i1", "acme", "context", ("fact:f1", "note:f2", "relation:r1", "decision:d1"), None, T0),
        Answered("i2", "acme", "feedback", ("fact:f1",), "useful", T0 + timedelta(minutes=1)),
        Answered("i3", "acme", "feedback", ("note:f2",), "not_useful", T0),
        Answered("i4", "acme", "feedback", ("fact:f3",), "useful", T0),  # another tenant's fact
    ]
    current = {"f1": UsageTotals(NS, "f1", exposures=10, recalls=2, last_seen=T0 - timedelta(days=1))}
    out = {t.fact_id: t for t in fold_usage(exposures, answered, where, current)}
    assert set(out) == {"f1", "f2"}  # unknown and other-tenant facts are left out
    assert (out["f1"].exposures, out["f1"].recalls, out["f1"].negative) == (14, 3, 0)
    assert out["f1"].last_seen == T0 + timedelta(minutes=1)
    assert (out["f2"].exposures, out["f2"].recalls, out["f2"].negative) == (1, 0, 1)


def test_the_usage_signal_is_bounded_and_signed():
    assert usage_signal(0, 0) == 0.0 == usage_signal(None, None)
    assert 0 < usage_signal(1, 0) < usage_signal(3, 0) < usage_signal(USAGE_SATURATES, 0) == 1.0
    assert usage_signal(1000, 0) == 1.0 and usage_signal(0, 1000) == -1.0
    assert usage_signal(2, 2) == 0.0 and usage_signal(1, 3) < 0


def test_exposures_are_counted_in_memory_up_to_their_bound():
    counts = Exposures()
    assert not counts.add(NS, ["f1", "f2"], T0)
    assert not counts.add(NS, ["f1"], T0 + timedelta(minutes=1))
    taken = {e.fact_id: e for e in counts.take()}
    assert (taken["f1"].count, taken["f1"].last_seen, taken["f2"].count) == (2, T0 + timedelta(minutes=1), 1)
    assert len(counts) == 0
    counts.put_back(list(taken.values()))
    assert not counts.add(NS, ["f1"], T0)
    assert {e.fact_id: e.count for e in counts.take()} == {"f1": 3, "f2": 1}
    assert counts.add(NS, [f"f{i}" for i in range(EXPOSURES_FLUSH_AT)], T0)  # time to write them


# -- recorded, folded, read back -----------------------------------------------------------------


def test_a_fold_folds_what_was_recorded_once_and_a_later_one_only_what_came_since(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        ana = memory.for_run(ANA)
        a, b = twins(ana)
        found = ana.recall("harbour ferry", k=2)
        shown = {h.fact_id for h in found.hits}
        assert shown == {a, b}
        ana.retrieval_feedback(found.trace_id, ref(next(h for h in found.hits if h.fact_id == a)), "useful")
        ana.retrieval_feedback(found.trace_id, ref(next(h for h in found.hits if h.fact_id == b)), "not_useful")
        waiting = memory.fold_usage(apply=False)
        assert waiting["waiting"] == 4 and waiting["buffered"] == 2 and waiting["folded"] == 0
        first = memory.fold_usage()
        assert (first["exposures"], first["useful"], first["not_useful"], first["folded"]) == (2, 1, 1, 2)
        again = memory.fold_usage()
        assert again["folded"] == 0 and again["exposures"] == 0 and again["waiting"] == 0
        totals = memory.store.usage.totals_of([a, b])
        assert (totals[a].exposures, totals[a].recalls, totals[a].negative) == (1, 1, 0)
        assert (totals[b].exposures, totals[b].recalls, totals[b].negative) == (1, 0, 1)
        assert totals[a].namespace == NS
        clock.set(T0 + timedelta(minutes=5))
        ana.recall("harbour ferry", k=1)  # counted in memory, written when the home closes
    with Memory.open(home, clock=clock) as memory:  # a later process, no embedder: folds what was written
        assert memory.fold_usage(apply=False)["exposures"] == 1
        assert memory.fold_usage()["folded"] == 1
        totals = memory.store.usage.totals_of([a, b])
        assert totals[a].exposures + totals[b].exposures == 3


def test_a_view_and_a_context_count_what_they_showed_and_their_feedback(memory):
    _, bob, _ = lensed(memory)
    fact_id = bob.set("deploy", "Deploys are frozen on Friday", memory_type="lesson").version.fact_id
    found = bob.get_context(query="deploys")
    item = found.lessons[0]
    bob.retrieval_feedback(found.interaction_id, item.ref, "useful")
    bob.render()
    report = memory.fold_usage()
    assert (report["interactions"], report["useful"]) == (2, 1)
    totals = memory.store.usage.totals_of([fact_id])[fact_id]
    assert (totals.exposures, totals.recalls, totals.negative) == (2, 1, 0)
    assert memory.fold_usage()["folded"] == 0


def test_counts_a_failed_write_could_not_store_wait_in_memory_for_the_next_fold(home, clock):
    store = FaultyStore.open(home)
    memory = Memory(store, clock, embedder=HashingEmbedder())
    try:
        ana = memory.for_run(ANA)
        twins(ana)
        ana.recall("harbour ferry", k=2)
        store.usage = FailingCalls(store.inner.usage, "record_exposures", after=0)
        with pytest.raises(Killed):
            memory.fold_usage()
        assert memory.fold_usage(apply=False)["buffered"] == 2  # put back, not lost
        store.usage = store.inner.usage
        assert memory.fold_usage()["exposures"] == 2
    finally:
        memory.close()


def test_an_interaction_committed_after_a_later_fold_is_still_folded_once(home):
    """The cursor is the newest interaction folded; one stamped earlier but recorded after (two
    threads) is read within the lookback, and the ids already folded are not read twice."""
    clock = FixedClock(T0)
    with Memory.open(home, clock=clock) as memory:
        _, bob, _ = lensed(memory)
        bob.set("deploy", "Deploys are frozen on Friday", memory_type="lesson")
        clock.set(T0 + timedelta(minutes=30))
        bob.get_context(query="deploys")
        assert memory.fold_usage()["interactions"] == 1
        clock.set(T0 + timedelta(minutes=10))  # stamped before the cursor, within the lookback
        bob.get_context(query="deploys")
        clock.set(T0 + timedelta(minutes=40))
        assert memory.fold_usage()["interactions"] == 1
        assert memory.fold_usage()["interactions"] == 0
        clock.set(T0 + timedelta(minutes=30) - LOOKBACK - timedelta(minutes=1))  # before the lookback
        bob.get_context(query="deploys")
        assert memory.fold_usage(apply=False)["interactions"] == 0


def test_the_usage_recipe_lifts_what_callers_used_and_sinks_what_they_rejected(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        ana = memory.for_run(ANA)
        a, b = twins(ana)
        before = ana.recall("harbour ferry", k=2, recipe="hybrid_usage")
        # the twins score the same: the tie is broken by fact id, whatever their usage
        assert {h.fact_id for h in before.hits} == {a, b}
        loser = before.hits[1]
        for _ in range(3):
            found = ana.recall("harbour ferry", k=2)
            for hit in found.hits:
                ana.retrieval_feedback(
                    found.trace_id, ref(hit), "useful" if hit.fact_id == loser.fact_id else "not_useful"
                )
        memory.fold_usage()
        after = ana.recall("harbour ferry", k=2, recipe="hybrid_usage")
        assert after.hits[0].fact_id == loser.fact_id
        recipe = RECIPES["hybrid_usage"]
        up, down = after.hits[0].terms["usage_prior"], after.hits[1].terms["usage_prior"]
        assert 0 < up <= recipe.usage_prior and -recipe.usage_prior <= down < 0
        assert abs(up) <= recipe.prior_cap
        default = ana.recall("harbour ferry", k=2)
        assert default.recipe["name"] == DEFAULT_RECIPE and default.recipe["usage_prior"] == 0.0
        assert [h.fact_id for h in default.hits] == [h.fact_id for h in before.hits]  # the default reads no usage
        assert all("usage_prior" not in h.terms for h in default.hits)


def test_an_erasure_takes_the_namespace_usage_with_it(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        ana, ben = memory.for_run(ANA), memory.for_run(BEN)
        a, _ = twins(ana)
        kept = ben.set("boat", "the harbour ferry leaves at ten").version.fact_id
        for tool in (ana, ben):
            found = tool.recall("harbour ferry", k=1)
            tool.retrieval_feedback(found.trace_id, ref(found.hits[0]), "useful")
        memory.fold_usage()
        ana.recall("harbour ferry", k=1)
        memory.close()  # its exposure is written: waiting in the queue when the erasure runs
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        assert memory.erase("acme", user="ana").status.value == "verified"
        rows = memory.store.unchecked_sql(
            "SELECT owner_id, fact_id FROM usage_totals UNION ALL SELECT owner_id, fact_id FROM usage_exposures"
        )
        assert rows == [{"owner_id": "ben", "fact_id": kept}]
        assert a not in memory.store.usage.totals_of([a])
