"""The reflect job (assets/reflect.py): its five assets materialized for a tenant partition on a
home holding a synthetic session stream (captures, a transcript, decision traces written through
the Memory tool) state the expected facts and record the refused claims; a completed run run
again writes nothing; a run killed inside a verify write and run again settles exactly where an
uninterrupted run on an identical home does."""

from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import dagster as dg

from assets.definitions import defs
from assets.reflect import REFLECT
from assets.resources import EmbedderResource, MemoryHomeResource
from memory_core import Memory
from memory_core.reflect import PHASES, REFLECT_ACTOR
from tests.faults import FaultyStore
from tests.reflect_stream import EXPECTED_TEXTS, REJECTED, RETIRED, TENANT, clock, final_state, live_facts, write_stream

NODES = [a.key.to_user_string() for a in REFLECT]


class KillingHome(MemoryHomeResource):
    """The home, its version log failing inside the reflect pipeline's ``fail_at``-th write (the
    process dies there: that write never lands)."""

    fail_at: int = 3

    @contextmanager
    def open(self, *, read_only: bool = False, embedder: EmbedderResource | None = None) -> Iterator[Memory]:
        store = FaultyStore.open(self.path)
        seen: list = []

        def reflect_write(batch) -> bool:
            seen.extend(a for a in batch.audits if a.actor == REFLECT_ACTOR and a.op == "set")
            return len(seen) >= self.fail_at

        store.versions.fail_inside(reflect_write, OSError("killed"))
        memory = Memory(store, embedder=embedder.build(self.path) if embedder is not None else None)
        try:
            yield memory
        finally:
            memory.close()


def stream_home(path: Path) -> Path:
    with Memory.open(path, clock=clock(), embedder="hashing") as memory:
        write_stream(memory)
    return path


def resources(home: Path, killing: bool = False) -> dict:
    memory_home = KillingHome(home=str(home)) if killing else MemoryHomeResource(home=str(home))
    return {"memory_home": memory_home, "embedder": EmbedderResource(name="hashing")}


def tenant_instance() -> dg.DagsterInstance:
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions("tenants", [TENANT])
    return instance


def materialize(home: Path, instance: dg.DagsterInstance, killing: bool = False) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        list(REFLECT), partition_key=TENANT, instance=instance, resources=resources(home, killing), raise_on_error=False
    )


def metadata(result: dg.ExecuteInProcessResult, node: str) -> dict:
    (found,) = result.asset_materializations_for_node(node)
    assert found.partition == TENANT
    return {k: v.value for k, v in found.metadata.items()}


def settled(home: Path) -> dict:
    with Memory.open(home, read_only=True) as memory:
        return final_state(memory)


def test_the_reflect_job_runs_the_five_phases_of_a_tenant_in_order():
    job = defs.resolve_job_def("reflect_job")
    assert {n.name for n in job.nodes} == set(NODES) and job.partitions_def.name == "tenants"
    graph = defs.resolve_asset_graph()
    for upstream, downstream in zip(REFLECT, REFLECT[1:]):
        assert upstream.key in graph.get(downstream.key).parent_keys
    assert defs.resolve_schedule_def("hourly_reflect").job.name == "reflect_job"
    assert set(NODES).isdisjoint(n.name for n in defs.resolve_job_def("main").nodes)


def test_the_reflect_assets_digest_a_session_stream_for_a_tenant_partition(tmp_path):
    home, instance = stream_home(tmp_path / "home"), tenant_instance()
    result = materialize(home, instance)
    assert result.success
    reduce = metadata(result, "reflect_reduce")
    assert (reduce["inputs_capture"], reduce["inputs_transcript"], reduce["inputs_decision"]) == (5, 1, 3)
    assert reduce["claims"] == 13 and reduce["cursor_from"] == 0
    assert metadata(result, "reflect_connect")["contradicts"] == 2
    assert metadata(result, "reflect_reweave")["supersede"] == 1
    verify = metadata(result, "reflect_verify")
    assert verify["written"] == 7 and verify["rejected"] == sum(REJECTED.values())
    reasons = sorted(c["reason"].split(":", 1)[0] for c in verify["rejected_claims"])
    assert reasons == sorted(code for code, n in REJECTED.items() for _ in range(n))
    assert metadata(result, "reflect_archive")["archived"] == 9
    for node in NODES:
        assert instance.get_materialized_partitions(dg.AssetKey(node)) == {TENANT}
    with Memory.open(home, read_only=True) as memory:
        facts = live_facts(memory)
        assert EXPECTED_TEXTS <= set(facts.values()) and not RETIRED & {key for _, _, key in facts}
        claims = memory.reflect_state(TENANT)["claims"]
        assert {c["status"] for c in claims} == {"written", "rejected"} and all(c["archived"] for c in claims)


def test_a_completed_reflect_run_run_again_writes_nothing(tmp_path):
    home, instance = stream_home(tmp_path / "home"), tenant_instance()
    assert materialize(home, instance).success
    done = settled(home)
    again = materialize(home, instance)
    assert again.success
    assert metadata(again, "reflect_reduce")["own_events"] > 0 and "claims" not in metadata(again, "reflect_reduce")
    assert "written" not in metadata(again, "reflect_verify")
    after = settled(home)
    assert {k: after[k] for k in ("facts", "claims", "inputs")} == {k: done[k] for k in ("facts", "claims", "inputs")}
    with Memory.open(home, read_only=True) as memory:
        tables = memory.store.inspection.tables()
    assert materialize(home, instance).success
    with Memory.open(home, read_only=True) as memory:
        assert memory.store.inspection.tables() == tables  # caught up with its own writes: not a row


def test_a_reflect_run_killed_inside_verify_and_run_again_settles_as_an_uninterrupted_run(tmp_path):
    whole, killed = stream_home(tmp_path / "whole"), stream_home(tmp_path / "killed")
    for _ in range(2):  # the second run passes over the first's own writes: cursors settle
        assert materialize(whole, tenant_instance()).success
    instance = tenant_instance()
    broken = materialize(killed, instance, killing=True)
    assert not broken.success
    assert {n for n in NODES if broken.asset_materializations_for_node(n)} == set(NODES[:3])
    with Memory.open(killed, read_only=True) as memory:
        state = memory.reflect_state(TENANT)
        statuses = {c["status"] for c in state["claims"]}
        assert {"written", "applying", "planned"} <= statuses  # two written, the third died in its write
        assert state["cursors"].get("verify", 0) < state["cursors"]["reweave"] and "archive" not in state["cursors"]
    assert materialize(killed, instance).success
    assert materialize(killed, instance).success
    assert settled(killed) == settled(whole)
    assert set(settled(whole)["cursors"]) == set(PHASES)
