"""The extraction group (queue drain and its sensor) and the extraction evals, materialized."""

import dagster as dg

from assets.evals import coref_mcnemar, extraction_observation_recall
from assets.extraction import extraction_queue_drain
from assets.resources import EmbedderResource, LLMResource, MemoryHomeResource
from assets.schedules import extraction_queue_sensor
from memory_core import Identity, Memory

TALK = [{"role": "user", "name": "Ana", "content": "I live in Lisbon."}]


def test_the_sensor_launches_the_drain_for_new_work_and_the_drain_runs_it(tmp_path):
    home = tmp_path / "home"
    resources = {
        "memory_home": MemoryHomeResource(home=str(home)),
        "embedder": EmbedderResource(name="hashing"),
        "llm": LLMResource(),
    }
    sensor_context = dg.build_sensor_context(resources={"memory_home": resources["memory_home"]})
    assert isinstance(extraction_queue_sensor(sensor_context), dg.SkipReason)  # no home yet
    with Memory.open(home) as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
        tool.enqueue_extraction(TALK, session="s1")
    request = extraction_queue_sensor(sensor_context)
    assert isinstance(request, dg.RunRequest)
    result = dg.materialize([extraction_queue_drain], resources=resources)
    assert result.success
    md = result.asset_materializations_for_node("extraction_queue_drain")[0].metadata
    assert md["done"].value == 1 and md["claimed"].value == 1
    with Memory.open(home, read_only=True) as memory:
        assert memory.for_run(Identity(tenant="acme", user="ana")).get("ana:lives_in").value == "Ana lives in Lisbon"
    later = dg.build_sensor_context(resources={"memory_home": resources["memory_home"]}, cursor=sensor_context.cursor)
    assert isinstance(extraction_queue_sensor(later), dg.SkipReason)  # nothing new since


def test_the_extraction_evals_report_or_say_why_they_were_skipped(tmp_path, monkeypatch):
    monkeypatch.setenv("MEMCORE_SHARED", str(tmp_path / "nowhere"))
    resources = {
        "memory_home": MemoryHomeResource(home=str(tmp_path / "home")),
        "embedder": EmbedderResource(name="hashing"),
        "llm": LLMResource(),
    }
    result = dg.materialize([coref_mcnemar, extraction_observation_recall], resources=resources)
    assert result.success
    coref = result.asset_materializations_for_node("coref_mcnemar")[0].metadata
    assert coref["items"].value == 200 and coref["mudoco"].value.startswith("skipped: no MuDoCo files")
    assert coref["whole_batch_accuracy"].value > coref["per_span_accuracy"].value
    obs = result.asset_materializations_for_node("extraction_observation_recall")[0].metadata
    assert obs["skipped"].value is True and "not found" in obs["reason"].value
