"""The usage fold and the embedding worker as assets (assets/workers.py), each on a home built to
need it: the worker does its work (a second run changes nothing), and its check passes on a
healthy home and fails on the broken one; both also run through a memory service."""

import dagster as dg

from assets.definitions import defs
from assets.resources import EmbedderResource, MemoryHomeResource
from assets.workers import embedding_worker, every_indexable_fact_has_a_vector, usage_fold, usage_totals_are_current
from memory_core import Identity, Memory
from tests.index_faults import IndexFaults

RUN = Identity(tenant="t", user="u")


def resources(home):
    return {"memory_home": MemoryHomeResource(home=str(home)), "embedder": EmbedderResource(name="hashing")}


def metadata(result, node):
    return {k: v.value for k, v in result.asset_materializations_for_node(node)[0].metadata.items()}


def write_facts(tool, n=6):
    return [tool.set(f"k{i}", f"fact number {i} about tides {i * 7}").version.fact_id for i in range(n)]


# -- usage_fold ----------------------------------------------------------------------------------


def used_home(tmp_path):
    """Searches whose hits were shown, one said useful and one not, never folded."""
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(RUN)
        write_facts(tool)
        found = tool.recall("fact about tides", k=3)
        for hit, verdict in zip(found.hits, ("useful", "not_useful")):
            tool.retrieval_feedback(found.trace_id, f"{hit.kind.value}:{hit.fact_id}", verdict)
    return home


def test_usage_fold_folds_once_and_its_check_fails_until_it_has(tmp_path):
    home = used_home(tmp_path)
    failed = usage_totals_are_current(memory_home=MemoryHomeResource(home=str(home)))
    assert not failed.passed and failed.metadata["waiting"].value == 5  # 3 hits shown, 2 pieces of feedback
    first = dg.materialize([usage_fold], resources=resources(home))
    md = metadata(first, "usage_fold")
    assert first.success and md["exposures"] == 3 and md["useful"] == 1 and md["not_useful"] == 1
    assert md["folded"] == 3
    again = metadata(dg.materialize([usage_fold], resources=resources(home)), "usage_fold")
    assert again["folded"] == 0 and again["exposures"] == 0
    assert usage_totals_are_current(memory_home=MemoryHomeResource(home=str(home))).passed


def test_usage_check_passes_on_a_home_nobody_searched(tmp_path):
    home = tmp_path / "healthy"
    with Memory.open(home) as memory:
        write_facts(memory.for_run(RUN))
    assert usage_totals_are_current(memory_home=MemoryHomeResource(home=str(home))).passed


# -- embedding_worker ----------------------------------------------------------------------------


def unembedded_home(tmp_path):
    """Facts written while the home was opened without an embedder: the index lacks them."""
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        memory.for_run(RUN).set("seed", "an indexed fact")
    with Memory.open(home) as memory:
        facts = write_facts(memory.for_run(RUN))
    return home, facts


def test_embedding_worker_fills_the_index_and_its_check_fails_until_it_has(tmp_path):
    home, facts = unembedded_home(tmp_path)
    failed = every_indexable_fact_has_a_vector(**resources(home))
    assert not failed.passed and failed.metadata["missing"].value == 6
    assert sorted(failed.metadata["fact_ids"].value) == sorted(facts)
    run = dg.materialize(
        [embedding_worker],
        resources=resources(home),
        run_config={"ops": {"embedding_worker": {"config": {"limit": 4}}}},
    )
    md = metadata(run, "embedding_worker")
    assert run.success and md["caught_up"] == 6 and md["missing"] == 0 and md["batch"] == 0
    assert every_indexable_fact_has_a_vector(**resources(home)).passed
    again = metadata(dg.materialize([embedding_worker], resources=resources(home)), "embedding_worker")
    assert again["caught_up"] == 0 and again["batch"] == 0 and again["filled"] == 0


def failed_writes_home(tmp_path):
    """Facts whose index write failed (a full disk): recorded for repair, missing from the index."""
    home = tmp_path / "failed"
    lance = IndexFaults()
    with Memory.open(home, embedder="hashing", open_index=lance.open_index) as memory:
        tool = memory.for_run(RUN)
        tool.set("seed", "an indexed fact")
        memory.flush()
        lance.failing = OSError("no space left on device")
        facts = write_facts(tool)
        memory.flush()
        lance.failing = None
    return home, facts


def test_embedding_worker_writes_failed_facts_a_bounded_batch_per_run(tmp_path):
    home, facts = failed_writes_home(tmp_path)
    assert not every_indexable_fact_has_a_vector(**resources(home)).passed
    config = {"ops": {"embedding_worker": {"config": {"limit": 4}}}}
    first = metadata(
        dg.materialize([embedding_worker], resources=resources(home), run_config=config), "embedding_worker"
    )
    assert (first["missing"], first["failed_writes"], first["filled"], first["left"]) == (6, 6, 4, 2)
    assert not every_indexable_fact_has_a_vector(**resources(home)).passed  # two are left
    second = metadata(
        dg.materialize([embedding_worker], resources=resources(home), run_config=config), "embedding_worker"
    )
    assert (second["missing"], second["filled"], second["left"]) == (2, 2, 0)
    assert sorted(first["fact_ids"] + second["fact_ids"]) == sorted(facts)
    assert every_indexable_fact_has_a_vector(**resources(home)).passed
    with Memory.open(home, embedder="hashing") as memory:
        assert memory.projector.consistency().ok and not memory.store.projections.pending_projection_failures()


def test_embedding_check_passes_on_a_home_written_with_its_embedder(tmp_path):
    home = tmp_path / "healthy"
    with Memory.open(home, embedder="hashing") as memory:
        write_facts(memory.for_run(RUN))
    result = every_indexable_fact_has_a_vector(**resources(home))
    assert result.passed and result.metadata["indexable"].value == 6


def test_both_have_jobs_and_schedules_and_stay_out_of_the_main_job():
    schedules = {s.name: s.job.name for s in defs.schedules}
    checks = {"usage_fold": "usage_totals_are_current", "embedding_worker": "every_indexable_fact_has_a_vector"}
    for asset, check_name in checks.items():
        job = defs.resolve_job_def(f"{asset}_job")
        assert {n.name for n in job.nodes} == {asset, f"{asset}_{check_name}"}
        assert f"{asset}_job" in schedules.values()
    assert not set(checks) & {n.name for n in defs.resolve_job_def("main").nodes}


def test_both_run_through_a_memory_service(tmp_path, monkeypatch):
    from memory_core.service import ThreadedServer

    home, _ = unembedded_home(tmp_path)
    with Memory.open(home, embedder="hashing") as memory:
        admin, _ = memory.keys.create(tenant="ops", user="operator", admin=True, label="dagster")
        monkeypatch.setenv("MEMCORE_KEY", admin)
        with ThreadedServer(memory) as server:
            served = {"memory_home": MemoryHomeResource(url=server.url), "embedder": EmbedderResource(name="hashing")}
            # a search the service answered: its exposures are in the service's memory, not the store
            memory.for_run(RUN).recall("fact about tides", k=2)
            assert not usage_totals_are_current(memory_home=served["memory_home"]).passed
            result = dg.materialize([usage_fold, embedding_worker], resources=served)
            assert result.success
            assert metadata(result, "usage_fold")["folded"] == 2
            assert usage_totals_are_current(memory_home=served["memory_home"]).passed
            assert every_indexable_fact_has_a_vector(**served).passed
