"""The first Dagster slice, materialized against a temporary memory home."""

import dataclasses
import json

import dagster as dg

from assets.definitions import defs
from assets.resources import MemoryHomeResource
from assets.timeline import (
    audit_chain_verifies,
    no_overlapping_live_intervals,
    probes_answer_as_constructed,
    timeline_corpus,
    timeline_memory,
    timeline_summary,
)
from memory_core import Identity, Memory
from memory_core.ports import KeyChange, WriteBatch

SMALL = {
    "ops": {
        name: {"config": {"seed": 3, "subjects": 6, "tenant": "t-demo"}}
        for name in ("timeline_corpus", "timeline_memory", "timeline_memory_probes_answer_as_constructed")
    }
}


def _materialize(home):
    return dg.materialize(
        [
            timeline_corpus,
            timeline_memory,
            timeline_summary,
            no_overlapping_live_intervals,
            audit_chain_verifies,
            probes_answer_as_constructed,
        ],
        resources={"memory_home": MemoryHomeResource(home=str(home))},
        run_config=SMALL,
    )


def test_the_slice_materializes_and_every_check_passes(tmp_path):
    home = tmp_path / "home"
    result = _materialize(home)
    assert result.success
    checks = result.get_asset_check_evaluations()
    assert {c.check_name for c in checks} == {
        "no_overlapping_live_intervals",
        "audit_chain_verifies",
        "probes_answer_as_constructed",
    }
    assert all(c.passed for c in checks)
    summary = json.loads((home / "reports" / "timeline_summary.json").read_text())
    assert summary["tables"]["memory_versions"] > 0 and summary["owners"] == 6
    md = result.asset_materializations_for_node("timeline_summary")[0].metadata
    assert md["memory_versions"].value == summary["tables"]["memory_versions"]
    # A second materialization finds the corpus already loaded and writes nothing new.
    again = _materialize(home)
    assert again.success
    assert json.loads((home / "reports" / "timeline_summary.json").read_text())["tables"] == summary["tables"]


def test_defs_load_and_the_main_job_resolves():
    job = defs.resolve_job_def("main")
    assert {n.name for n in job.nodes} >= {"timeline_corpus", "timeline_memory", "timeline_summary"}
    assert defs.resolve_asset_graph().get_all_asset_keys()


def _broken_overlap(home):
    """A store in which one key holds two facts live over the same days (the core never writes this)."""
    with Memory.open(home) as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        first = tool.set("city", "Berlin", valid_at="2024-01-01T00:00:00Z").version
        forged = dataclasses.replace(first, id="forged", fact_id="forged", value_json='"Paris"', version=2)
        audit = dataclasses.replace(memory.store.versions.audit_rows()[-1].entry, version_ids="forged")
        memory.store.versions.apply(
            WriteBatch((KeyChange(tool.identity.namespace("user"), "city", (forged,)),), (audit,))
        )


def test_overlap_check_fails_on_a_store_built_to_break_it(tmp_path):
    home = tmp_path / "home"
    _broken_overlap(home)
    result = no_overlapping_live_intervals(memory_home=MemoryHomeResource(home=str(home)))
    assert not result.passed and result.metadata["overlapping_pairs"].value == 1


def test_audit_check_fails_on_a_tampered_chain(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home) as memory:
        memory.for_run(Identity(tenant="t", user="u")).set("k", 1)
        memory.store.unchecked_sql("UPDATE audit_log SET actor = 'someone-else'")
    result = audit_chain_verifies(memory_home=MemoryHomeResource(home=str(home)))
    assert not result.passed


def test_cross_tenant_check_fails_on_a_row_moved_to_another_tenant(tmp_path):
    from assets.timeline import no_row_across_tenants

    home = tmp_path / "home"
    with Memory.open(home) as memory:
        memory.for_run(Identity(tenant="t", user="u")).set("policy", "shared", scope="tenant")
    assert no_row_across_tenants(memory_home=MemoryHomeResource(home=str(home))).passed
    with Memory.open(home) as memory:
        memory.store.unchecked_sql("UPDATE memory_versions SET owner_id = 'other-tenant' WHERE scope = 'tenant'")
    result = no_row_across_tenants(memory_home=MemoryHomeResource(home=str(home)))
    assert not result.passed and result.metadata["problems"].value >= 1


def test_table_check_fails_on_a_table_nobody_classified(tmp_path):
    from assets.timeline import every_table_classified

    home = tmp_path / "home"
    with Memory.open(home) as memory:
        memory.for_run(Identity(tenant="t", user="u")).set("k", 1)
    assert every_table_classified(memory_home=MemoryHomeResource(home=str(home))).passed
    with Memory.open(home) as memory:
        memory.store.unchecked_sql("CREATE TABLE stray_copy AS SELECT * FROM memory_versions")
    result = every_table_classified(memory_home=MemoryHomeResource(home=str(home)))
    assert not result.passed and result.metadata["unclassified"].value == ["stray_copy"]


def test_tenants_become_partitions_and_each_gets_a_report(tmp_path):
    from assets.schedules import tenant_partitions_sensor
    from assets.tenants import tenant_report

    home = tmp_path / "home"
    with Memory.open(home) as memory:
        for tenant in ("acme", "globex"):
            memory.for_run(Identity(tenant=tenant, user="u")).set("k", tenant)
    instance = dg.DagsterInstance.ephemeral()
    resource = MemoryHomeResource(home=str(home))
    result = tenant_partitions_sensor(dg.build_sensor_context(instance=instance, resources={"memory_home": resource}))
    assert sorted(r.partition_key for r in result.run_requests) == ["acme", "globex"]
    instance.add_dynamic_partitions("tenants", ["acme", "globex"])
    done = dg.materialize([tenant_report], partition_key="acme", instance=instance, resources={"memory_home": resource})
    assert done.success
    md = done.asset_materializations_for_node("tenant_report")[0].metadata
    assert md["facts_active"].value == 1 and "data:image/png;base64" in md["plot"].value
    assert (home / "reports" / "tenants" / "acme.png").exists()
    again = tenant_partitions_sensor(dg.build_sensor_context(instance=instance, resources={"memory_home": resource}))
    assert isinstance(again, dg.SkipReason)


def test_the_llm_resource_is_offline_by_default():
    from assets.resources import LLMResource
    from memory_core.adapters.llm.judge import LLMJudge
    from memory_core.extraction.rules import RuleExtractor
    from memory_core.resolver.judge import RuleJudge

    assert isinstance(LLMResource().extractor(), RuleExtractor) and isinstance(LLMResource().judge(), RuleJudge)
    online = LLMResource(base_url="http://127.0.0.1:9/v1", model="m")
    assert isinstance(online.judge(), LLMJudge) and online.extractor().name == "openai:m"


def test_the_probe_check_fails_when_the_store_answers_otherwise(tmp_path):
    from assets.timeline import TimelineConfig
    from corpora.timeline import generate_timeline, load_timeline

    home = tmp_path / "home"
    corpus = generate_timeline(seed=3, subjects=3)
    with Memory.open(home) as memory:
        load_timeline(memory, corpus, tenant="t-demo", run="r")
        memory.store.unchecked_sql("UPDATE memory_versions SET value_json = '\"Atlantis\"' WHERE key = 'city'")
    result = probes_answer_as_constructed(
        memory_home=MemoryHomeResource(home=str(home)),
        config=TimelineConfig(seed=3, subjects=3, tenant="t-demo"),
        timeline_corpus=corpus,
    )
    assert not result.passed and result.metadata["right"].value < result.metadata["probes"].value
