"""The consolidation asset on a temporary home, and the nightly job that runs it after the queue."""

import dagster as dg

from assets.compounding import consolidation
from assets.definitions import defs
from assets.resources import EmbedderResource, LLMResource, MemoryHomeResource
from memory_core import Identity, Memory

HIKES = (
    ("hike_often", "In the Alps Ana goes hiking each summer"),
    ("hike_maya", "Ana went hiking in the Alps with Maya last summer"),
)


def test_consolidation_merges_every_users_namespace(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        for user in ("ana", "bob"):
            tool = memory.for_run(Identity(tenant="t", user=user, agent="helper"))
            for key, value in HIKES:
                tool.set(key, value)
    resources = {
        "memory_home": MemoryHomeResource(home=str(home)),
        "embedder": EmbedderResource(name="hashing"),
        "llm": LLMResource(),
    }
    config = {"ops": {"consolidation": {"config": {"min_cosine": 0.45}}}}
    result = dg.materialize([consolidation], resources=resources, run_config=config)
    assert result.success
    metadata = result.asset_materializations_for_node("consolidation")[0].metadata
    assert (metadata["namespaces"].value, metadata["live_rows_before"].value, metadata["live_rows_after"].value) == (
        2,
        4,
        2,
    )
    assert metadata["clusters"].value == {"merged": 2}
    with Memory.open(home) as memory:
        for user in ("ana", "bob"):
            tool = memory.for_run(Identity(tenant="t", user=user, agent="helper"))
            [run] = tool.consolidation_runs()
            assert [c.outcome for c in run.clusters] == ["merged"] and run.actor == "agent:worker:consolidation"


def test_nightly_consolidation_drains_the_queue_then_consolidates():
    job = defs.resolve_schedule_def("nightly_consolidation").job
    assert {str(k.path[-1]) for k in defs.resolve_job_def(job.name).asset_layer.executable_asset_keys} == {
        "extraction_queue_drain",
        "consolidation",
    }
