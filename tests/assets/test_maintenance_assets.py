"""Maintenance assets against a temporary memory home, and the schedules that run them."""

import dagster as dg

from assets.definitions import defs
from assets.maintenance import expiry_sweep, index_maintenance
from assets.resources import EmbedderResource, MemoryHomeResource
from memory_core import Identity, Memory, Status


def resources(home):
    return {"memory_home": MemoryHomeResource(home=str(home)), "embedder": EmbedderResource(name="hashing")}


def test_expiry_sweep_applies_on_expire(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        tool.set("otp", "code 4411", ttl_seconds=0.000001)
        tool.set("stays", "no expiry")
    result = dg.materialize([expiry_sweep], resources=resources(home))
    assert result.success
    metadata = result.asset_materializations_for_node("expiry_sweep")[0].metadata
    assert metadata["tombstone"].value == 1 and metadata["keys"].value == 1
    with Memory.open(home) as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        assert tool.history("otp")[-1].status is Status.TOMBSTONED and tool.get("stays").value == "no expiry"


def test_index_maintenance_catches_up_repairs_and_optimizes(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home) as memory:  # written without an embedder: the index has not seen these
        memory.for_run(Identity(tenant="t", user="u")).bulk_set([{"key": f"k{i}", "value": f"v {i}"} for i in range(5)])
    result = dg.materialize([index_maintenance], resources=resources(home))
    assert result.success
    metadata = result.asset_materializations_for_node("index_maintenance")[0].metadata
    assert metadata["caught_up"].value == 5 and metadata["rows"].value == 5


def test_defs_resolve_every_job_schedule_and_sensor():
    for job in defs.resolve_all_job_defs():
        assert defs.resolve_job_def(job.name) is not None
    for schedule in defs.schedules:
        assert defs.resolve_schedule_def(schedule.name).job is not None
    for sensor in defs.sensors:
        if isinstance(sensor, dg.AutomationConditionSensorDefinition):  # targets assets, not a job
            assert sensor.asset_selection is not None
            continue
        assert defs.resolve_sensor_def(sensor.name).job is not None
    assert {s.name for s in defs.schedules} >= {
        "hourly_expiry_sweep",
        "nightly_index_maintenance",
        "nightly_consolidation",
        "resolver_every_15_minutes",
        "projection_repair_every_30_minutes",
    }
    assert {s.name for s in defs.sensors} == {
        "extraction_queue_sensor",
        "tenant_partitions_sensor",
        "pipeline_automation",
        "webhook_delivery_sensor",
    }
    for name in ("main", "expiry_sweep_job", "index_maintenance_job"):
        assert defs.resolve_job_def(name) is not None
    assert defs.resolve_schedule_def("hourly_expiry_sweep").job.name == "expiry_sweep_job"
    assert defs.resolve_schedule_def("nightly_index_maintenance").job.name == "index_maintenance_job"
    main = defs.resolve_job_def("main")
    assert "expiry_sweep" not in {n.name for n in main.nodes}


def test_projection_repair_replays_failed_index_writes(tmp_path):
    from assets.maintenance import projection_repair

    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        fact = tool.set("k", "a value the index missed").version
        memory.flush()
        memory.store.projections.record_projection_failure([fact], "disk full", fact.created_at)
    result = dg.materialize(
        [projection_repair],
        resources={"memory_home": MemoryHomeResource(home=str(home)), "embedder": EmbedderResource(name="hashing")},
    )
    md = result.asset_materializations_for_node("projection_repair")[0].metadata
    assert result.success and md["waiting"].value == 1 and md["repaired"].value == 1
