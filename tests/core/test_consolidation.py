"""Consolidation: clusters of similar live facts merged into one summary, with lineage, every
cluster's outcome recorded, and an undo that brings the merged rows back."""

from __future__ import annotations

from datetime import timedelta
from typing import Callable

import pytest

from memory_core import FixedClock, Identity, Memory, MemoryTool
from memory_core.consolidation import MergeAnswer, MergeRequest, RuleMerger
from memory_core.errors import InvalidInput, NotFound
from tests.conftest import store_snapshot

HIKES = (
    ("hike_often", "In the Alps Ana goes hiking each summer"),
    ("hike_maya", "Ana went hiking in the Alps with Maya last summer"),
)
LOOSE = 0.45  # the hashing embedder's cosines run low: these pairs sit near 0.5


@pytest.fixture
def ana(indexed_memory: Memory) -> MemoryTool:
    return indexed_memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))


def live(tool: MemoryTool) -> dict[str, str]:
    return {f.key: f.value for f in tool.list()}


def write(tool: MemoryTool, rows=HIKES, clock: FixedClock | None = None, **options) -> None:
    """With a clock, each row a minute after the one before (a summary keeps them in that order)."""
    for key, value in rows:
        if clock is not None:
            clock.set(clock.now() + timedelta(minutes=1))
        tool.set(key, value, **options)


class KeyMerger:
    """A merger that keeps the rules' text but names the key (as a model would)."""

    name = "scripted"

    def __init__(self, key: str, before: Callable[[MergeRequest], None] = lambda r: None) -> None:
        self.key, self.before = key, before

    def merge(self, request: MergeRequest) -> MergeAnswer:
        self.before(request)
        return MergeAnswer(self.key, RuleMerger().merge(request).text)


def test_a_cluster_merges_into_one_summary_with_lineage(
    ana: MemoryTool, indexed_memory: Memory, clock: FixedClock
) -> None:
    write(ana, clock=clock)
    ana.set("tea", "Ana drinks green tea in the morning")
    run = ana.consolidate(min_cosine=LOOSE)
    assert (run.merged, run.failed, run.live_before, run.live_after) == (1, 0, 3, 2)
    cluster = run.clusters[0]
    assert cluster.outcome == "merged" and cluster.left_live == ()
    now = live(ana)
    assert set(now) == {"tea", cluster.summary_key}
    assert now[cluster.summary_key] == (
        "In the Alps Ana goes hiking each summer. Ana went hiking in the Alps with Maya last summer."
    )
    summary = ana.get(cluster.summary_key)
    assert summary.source_class == "derived" and summary.provenance.source == f"consolidation:{run.run_id}"
    sources = ana.lineage(cluster.summary_key)
    assert sorted(r["source_key"] for r in sources) == ["hike_maya", "hike_often"]
    assert {r["support_type"] for r in sources} == {"derived_from"}
    assert [r["key"] for r in ana.lineage("hike_maya")] == [cluster.summary_key]  # and read from the source's side
    for key, _ in HIKES:  # retired as a new version that names the summary
        latest = ana.history(key)[-1]
        assert latest.status.value == "tombstoned" and latest.superseded_by == summary.id
    [kept] = ana.consolidation_runs()
    assert kept.run_id == run.run_id and [c.outcome for c in kept.clusters] == ["merged"]
    assert indexed_memory.verify_audit().ok
    assert [h.key for h in ana.recall("hiking in the Alps", k=3).hits][0] == cluster.summary_key


@pytest.mark.faces  # also through the memory service's HTTP face
def test_undo_restores_the_merged_rows_and_retires_the_summary(ana: MemoryTool) -> None:
    write(ana)
    before = live(ana)
    run = ana.consolidate(min_cosine=LOOSE)
    undone = ana.consolidation_undo(run.run_id)
    assert undone["restored"] == 2 and undone["not_restored"] == []
    assert live(ana) == before
    assert ana.consolidation_runs()[0].undone_at is not None
    assert ana.consolidation_undo(run.run_id)["restored"] == 0  # once undone, undone
    assert {h.key for h in ana.recall("hiking in the Alps", k=5).hits} == set(before)


def test_undo_leaves_a_row_changed_since_the_merge(ana: MemoryTool) -> None:
    write(ana)
    run = ana.consolidate(min_cosine=LOOSE)
    ana.restore("hike_maya")  # the owner brought one back by hand, then changed it
    ana.set("hike_maya", "Ana hiked the Dolomites with Maya")
    undone = ana.consolidation_undo(run.run_id)
    assert undone["restored"] == 1 and len(undone["not_restored"]) == 1
    assert live(ana) == {"hike_often": HIKES[0][1], "hike_maya": "Ana hiked the Dolomites with Maya"}


def test_the_summary_takes_its_own_key_when_the_chosen_one_is_held(ana: MemoryTool) -> None:
    write(ana)
    ana.set("alps", "Maya prefers the seaside")  # a live row the merge did not read
    run = ana.consolidate(min_cosine=LOOSE, merger=KeyMerger("alps"))
    cluster = run.clusters[0]
    assert cluster.outcome == "merged" and cluster.summary_key.startswith("alps:")
    assert live(ana)["alps"] == "Maya prefers the seaside"


def test_key_taken_when_the_own_key_is_held_too(ana: MemoryTool, indexed_memory: Memory) -> None:
    write(ana)
    ana.set("alps", "Maya prefers the seaside")
    dry = ana.consolidate(min_cosine=LOOSE, merger=KeyMerger("alps"), dry_run=True)
    ana.set(dry.clusters[0].summary_key, "Maya swims every morning")  # the cluster's own key, taken too
    before = live(ana)
    run = ana.consolidate(min_cosine=LOOSE, merger=KeyMerger("alps"))
    assert [c.outcome for c in run.clusters] == ["key_taken"]
    assert live(ana) == before
    assert ana.consolidation_runs()[-1].clusters[0].outcome == "key_taken"


def test_the_summary_may_take_a_merged_rows_key(ana: MemoryTool) -> None:
    write(ana)
    run = ana.consolidate(min_cosine=LOOSE, merger=KeyMerger("hike_often"))
    assert run.clusters[0].summary_key == "hike_often"
    assert set(live(ana)) == {"hike_often"} and "Maya" in live(ana)["hike_often"]
    ana.consolidation_undo(run.run_id)
    assert live(ana) == dict(HIKES)


def test_a_source_changed_since_the_read_is_left_live(ana: MemoryTool) -> None:
    rows = (*HIKES, ("hike_alone", "Ana goes hiking in the Alps alone each summer"))
    write(ana, rows)

    def change(request: MergeRequest) -> None:  # the owner writes while the merger thinks
        ana.set("hike_alone", "Ana goes hiking in the Alps alone every summer now")

    run = ana.consolidate(min_cosine=LOOSE, merger=KeyMerger("alps-hikes", before=change))
    [cluster] = run.clusters
    assert cluster.outcome == "merged" and len(cluster.source_facts) == 3 and len(cluster.left_live) == 1
    assert live(ana)["hike_alone"] == "Ana goes hiking in the Alps alone every summer now"
    assert {r["source_key"] for r in ana.lineage("alps-hikes")} == {"hike_often", "hike_maya"}


def test_changed_since_read_when_too_few_sources_remain(ana: MemoryTool) -> None:
    write(ana)

    def change(request: MergeRequest) -> None:
        ana.delete("hike_maya")

    run = ana.consolidate(min_cosine=LOOSE, merger=KeyMerger("alps-hikes", before=change))
    assert [c.outcome for c in run.clusters] == ["changed_since_read"]
    assert live(ana) == {"hike_often": HIKES[0][1]}


@pytest.mark.faces
def test_a_suppression_never_merges_with_a_positive(ana: MemoryTool) -> None:
    write(ana, (("spicy", "Ana likes spicy food a lot"), ("not_spicy", "Ana does not like spicy food a lot")))
    run = ana.consolidate(min_cosine=0.2)
    assert run.clusters == () and len(live(ana)) == 2


@pytest.mark.parametrize("option", ["pin", "lock", "high"])
def test_pinned_locked_and_high_rows_are_untouched(ana: MemoryTool, option: str) -> None:
    write(ana, HIKES[:1])
    if option == "high":
        ana.set(HIKES[1][0], HIKES[1][1], sensitivity="high")
    else:
        write(ana, HIKES[1:])
        getattr(ana, option)(HIKES[1][0])
    before = live(ana)
    assert ana.consolidate(min_cosine=LOOSE).clusters == ()
    assert live(ana) == before


def test_a_dry_run_writes_nothing(ana: MemoryTool, indexed_memory: Memory) -> None:
    write(ana)
    before = store_snapshot(indexed_memory)
    run = ana.consolidate(min_cosine=LOOSE, dry_run=True)
    assert run.dry_run and [c.outcome for c in run.clusters] == ["merged"] and run.clusters[0].summary_fact is None
    assert store_snapshot(indexed_memory) == before


def test_another_users_rows_and_runs_are_out_of_reach(ana: MemoryTool, indexed_memory: Memory) -> None:
    bob = indexed_memory.for_run(Identity(tenant="acme", user="bob", agent="helper"))
    write(ana)
    write(bob, ((HIKES[0][0], HIKES[0][1]),))
    run = ana.consolidate(min_cosine=LOOSE)
    assert run.merged == 1 and live(bob) == {HIKES[0][0]: HIKES[0][1]}
    with pytest.raises(NotFound):
        bob.consolidation_undo(run.run_id)
    assert bob.consolidation_runs() == []


def test_bad_input_is_refused_before_anything_is_read(ana: MemoryTool, indexed_memory: Memory) -> None:
    write(ana)
    before = store_snapshot(indexed_memory)
    for bad in ({"min_cosine": 1.5}, {"min_cosine": 0.0}, {"max_cluster": 1}, {"merger": object()}):
        with pytest.raises(InvalidInput):
            ana.consolidate(**bad)
    assert store_snapshot(indexed_memory) == before


def test_consolidate_all_runs_every_user_namespace(indexed_memory: Memory) -> None:
    for user in ("ana", "bob"):
        write(indexed_memory.for_run(Identity(tenant="acme", user=user, agent="helper")))
    runs = indexed_memory.consolidate_all(tenant="acme", min_cosine=LOOSE)
    assert sorted((r.owner_id, r.merged) for r in runs) == [("ana", 1), ("bob", 1)]
    assert {r.actor for r in runs} == {"agent:worker:consolidation"}
