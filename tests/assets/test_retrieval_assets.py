"""Retrieval and evaluation assets against a temporary memory home."""

import json

import dagster as dg
import pytest

from assets.evals import locomo_recall
from assets.resources import EmbedderResource, MemoryHomeResource
from assets.retrieval import index_agrees_with_heads, retrieval_index
from assets.timeline import timeline_corpus, timeline_memory
from memory_core import Identity, Memory
from tests.fixtures.locomo_fixture import write_locomo_fixture

SMALL = {
    "ops": {
        name: {"config": {"seed": 3, "subjects": 4, "tenant": "t-demo"}}
        for name in ("timeline_corpus", "timeline_memory")
    }
}


def resources(home):
    return {"memory_home": MemoryHomeResource(home=str(home)), "embedder": EmbedderResource(name="hashing")}


def test_retrieval_index_materializes_and_agrees_with_the_store(tmp_path):
    home = tmp_path / "home"
    result = dg.materialize(
        [timeline_corpus, timeline_memory, retrieval_index, index_agrees_with_heads],
        resources=resources(home),
        run_config=SMALL,
    )
    assert result.success
    (check,) = result.get_asset_check_evaluations()
    assert check.passed and check.metadata["missing"].value == 0
    rows = result.asset_materializations_for_node("retrieval_index")[0].metadata["rows"].value
    assert rows > 0
    with Memory.open(home, embedder="hashing") as memory:
        hits = memory.for_run(Identity(tenant="t-demo", user="subject-000")).recall("city").hits
        assert hits and hits[0].key == "city"


def test_index_check_fails_when_the_index_misses_a_live_head(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        memory.for_run(Identity(tenant="t", user="u")).set("k", "indexed")
    with Memory.open(home) as memory:  # a write made without the index: the index now lags
        missed = memory.for_run(Identity(tenant="t", user="u")).set("k2", "never indexed").version.fact_id
    result = index_agrees_with_heads(
        memory_home=MemoryHomeResource(home=str(home)), embedder=EmbedderResource(name="hashing")
    )
    assert not result.passed and result.metadata["missing"].value == 1
    assert result.metadata["missing_ids"].value == [missed]  # named by fact id, not only counted


def test_locomo_asset_skips_cleanly_without_data(tmp_path):
    result = dg.materialize(
        [locomo_recall],
        resources=resources(tmp_path / "home"),
        run_config={"ops": {"locomo_recall": {"config": {"data": str(tmp_path / "absent")}}}},
    )
    assert result.success
    md = result.asset_materializations_for_node("locomo_recall")[0].metadata
    assert md["skipped"].value is True and "absent" in md["reason"].value


def test_locomo_asset_reports_on_a_small_fixture(tmp_path):
    data = write_locomo_fixture(tmp_path / "locomo.json")
    config = {"data": str(data), "runs": "bm25_only,hashing:hybrid_rrf"}
    result = dg.materialize(
        [locomo_recall],
        resources=resources(tmp_path / "home"),
        run_config={"ops": {"locomo_recall": {"config": config}}},
    )
    assert result.success
    md = result.asset_materializations_for_node("locomo_recall")[0].metadata
    assert md["bm25_only r@10"].value == pytest.approx(100.0)
    out = tmp_path / "home" / "reports" / "locomo"
    assert (out / "locomo_recall.png").stat().st_size > 0
    report = (out / "locomo_report.md").read_text()
    assert "DRAGON" in report and "CC BY-NC 4.0" in report
    doc = json.loads((out / "locomo_results.json").read_text())
    assert {r["name"] for r in doc["results"]} == {"bm25_only", "hashing:hybrid_rrf"}
