"""The resolver loop offline end to end: the synthetic workload, then the scheduled pass."""

import dagster as dg

from assets.definitions import defs
from assets.evals import resolver_calibration
from assets.resolver import resolver_demo_statements
from assets.resources import EmbedderResource, LLMResource, MemoryHomeResource
from assets.schedules import SCHEDULES
from memory_core import Identity, Memory


def test_the_scheduled_resolver_pass_judges_the_synthetic_corpus_offline(tmp_path):
    home = tmp_path / "home"
    resources = {
        "memory_home": MemoryHomeResource(home=str(home)),
        "embedder": EmbedderResource(name="hashing"),
        "llm": LLMResource(),
    }
    loaded = dg.materialize(
        [resolver_demo_statements],
        resources=resources,
        run_config={"ops": {"resolver_demo_statements": {"config": {"pairs": 40}}}},
    )
    assert loaded.success
    [schedule] = [s for s in SCHEDULES if s.name == "resolver_every_15_minutes"]
    job = defs.resolve_job_def(schedule.job_name)
    low_floor = {"ops": {"resolver_pass": {"config": {"floor": 0.2, "batch": 200}}}}  # hashing cosines run low
    result = job.execute_in_process(resources=resources, run_config=low_floor)
    assert result.success
    md = result.asset_materializations_for_node("resolver_pass")[0].metadata
    assert md["judged"].value > 0 and md["action_retire"].value + md["action_flag"].value > 0
    assert (md["dropped"].value, md["paused"].value, md["stopped"].value) == (0, 0, "")  # the offline judge
    with Memory.open(home, embedder="hashing") as memory:
        records = [r for r in memory.store.ledger.resolver_records() if r["action"] == "retire"]
        assert memory.verify_audit().ok
        for record in records:  # every retirement recorded and undoable
            owner = memory.for_run(Identity(tenant=record["tenant"], user=record["owner_id"]))
            assert owner.restore(record["peer_key"]).verdict == "restored"
    again = job.execute_in_process(
        resources=resources, run_config=low_floor
    )  # judged once per version: nothing left owed
    assert again.asset_materializations_for_node("resolver_pass")[0].metadata["judged"].value == 0


def test_the_calibration_asset_reports_bands_and_a_plot(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_SHARED", str(tmp_path / "nowhere"))
    result = dg.materialize(
        [resolver_calibration], resources={"memory_home": MemoryHomeResource(home=str(tmp_path / "home"))}
    )
    assert result.success
    md = result.asset_materializations_for_node("resolver_calibration")[0].metadata
    assert md["pairs"].value > 300 and "were right" in md["findings"].value
    assert (tmp_path / "home" / "reports" / "resolver" / "resolver_reliability.png").stat().st_size > 1000
