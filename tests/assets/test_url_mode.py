"""The maintenance assets and the sensors through a memory service (the resource's ``url`` mode):
the same calls and the same metadata as on a home opened in process."""

import dagster as dg
import pytest

from assets.maintenance import expiry_sweep, index_maintenance, projection_repair, resolver_pass
from assets.resources import EmbedderResource, LLMResource, MemoryHomeResource
from assets.schedules import extraction_queue_sensor, tenant_partitions_sensor
from memory_core import Identity, Memory, Status
from memory_core.service import ThreadedServer

MAINTENANCE = [projection_repair, expiry_sweep, index_maintenance, resolver_pass]  # the order they run in here
TALK = [{"role": "user", "name": "Ana", "content": "I live in Lisbon."}]


def seed(memory: Memory) -> None:
    """Work for every maintenance asset: an expired fact, an index write that failed, a pair of
    statements left for the resolver, an extraction job queued."""
    memory.for_run(Identity(tenant="acme", user="ops", admin=True)).configure(
        policy="manual_review", conflict_threshold=0.99
    )
    tool = memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1"))
    tool.set("otp", "code 4411", ttl_seconds=0.000001)
    tool.set("office", "Ana's office is on the third floor of the Lisbon building")
    tool.set("office-now", "Ana's office is on the fourth floor of the Lisbon building")
    missed = tool.set("city", "a value the index missed").version
    memory.flush()
    memory.store.projections.record_projection_failure([missed], "disk full", missed.created_at)
    tool.enqueue_extraction(TALK, session="s1")
    memory.for_run(Identity(tenant="globex", user="bo")).set("k", "v")


def run_maintenance(memory_home: MemoryHomeResource, llm: LLMResource | None = None) -> dict[str, dict]:
    resources = {"memory_home": memory_home, "embedder": EmbedderResource(name="hashing"), "llm": llm or LLMResource()}
    found = {}
    for asset in MAINTENANCE:
        result = dg.materialize([asset], resources=resources)
        assert result.success
        name = asset.key.to_user_string()
        found[name] = {k: v.value for k, v in result.asset_materializations_for_node(name)[0].metadata.items()}
    return found


@pytest.fixture
def served(tmp_path, monkeypatch):
    """(the service's URL, the open home it serves), an admin key in $MEMCORE_KEY."""
    with Memory.open(tmp_path / "served", embedder="hashing") as memory:
        seed(memory)
        admin, _ = memory.keys.create(tenant="ops", user="operator", admin=True, label="dagster")
        monkeypatch.setenv("MEMCORE_KEY", admin)
        with ThreadedServer(memory) as server:
            yield server.url, memory


def test_the_maintenance_assets_do_through_the_service_what_they_do_on_the_home(tmp_path, served):
    url, memory = served
    remote = run_maintenance(MemoryHomeResource(url=url))
    with Memory.open(tmp_path / "local", embedder="hashing") as twin:
        seed(twin)
    local = run_maintenance(MemoryHomeResource(home=str(tmp_path / "local")))
    for name, metadata in local.items():
        assert set(remote[name]) == set(metadata), name
    assert remote["projection_repair"] == local["projection_repair"] == {"waiting": 1, "repaired": 1}
    assert remote["expiry_sweep"] == local["expiry_sweep"]
    assert remote["expiry_sweep"]["tombstone"] == 1 and remote["expiry_sweep"]["keys"] == 1
    assert remote["index_maintenance"]["unindexed_rows"] == 0 and remote["index_maintenance"]["rows"] > 0
    for field in ("judged", "action_flag", "marks"):
        assert remote["resolver_pass"][field] == local["resolver_pass"][field], field
    assert remote["resolver_pass"]["action_flag"] == 1
    # The service did the work on the home it holds.
    ana = memory.for_run(Identity(tenant="acme", user="ana"))
    assert ana.history("otp")[-1].status is Status.TOMBSTONED
    assert [i.key for i in ana.review_queue()] == ["office", "office-now"]
    assert memory.store.projections.pending_projection_failures() == []


def test_an_llm_judge_over_http_is_an_error_not_a_silent_rule_judge(served):
    url, memory = served
    resources = {
        "memory_home": MemoryHomeResource(url=url),
        "embedder": EmbedderResource(name="hashing"),
        "llm": LLMResource(base_url="http://127.0.0.1:9/v1", model="m"),
    }
    result = dg.materialize([resolver_pass], resources=resources, raise_on_error=False)
    assert not result.success
    [failure] = result.get_step_failure_events()
    said = failure.step_failure_data.user_failure_data.description
    assert "offline rule judge" in said and "127.0.0.1:9" in said
    assert memory.store.ledger.mark_counts() == {}  # no pass ran


def test_without_an_admin_key_the_assets_say_so(served, monkeypatch):
    url, memory = served
    resources = {"memory_home": MemoryHomeResource(url=url), "embedder": EmbedderResource(name="hashing")}
    monkeypatch.delenv("MEMCORE_KEY")
    result = dg.materialize([expiry_sweep], resources=resources, raise_on_error=False)
    [failure] = result.get_step_failure_events()
    assert "$MEMCORE_KEY" in failure.step_failure_data.user_failure_data.description
    tenant_key, _ = memory.keys.create(tenant="acme", user="ana")
    monkeypatch.setenv("MEMCORE_KEY", tenant_key)
    result = dg.materialize([expiry_sweep], resources=resources, raise_on_error=False)
    [failure] = result.get_step_failure_events()
    assert failure.step_failure_data.error.cause.cls_name == "AdminRequired"


def test_the_sensors_ask_the_service(served, monkeypatch):
    url, memory = served
    resource = MemoryHomeResource(url=url)
    context = dg.build_sensor_context(resources={"memory_home": resource})
    request = extraction_queue_sensor(context)
    assert isinstance(request, dg.RunRequest) and request.tags["queue_backlog"] == "1"
    assert memory.run_extraction_queue()["done"] == 1  # the served home, drained in process
    later = dg.build_sensor_context(resources={"memory_home": resource}, cursor=context.cursor)
    assert isinstance(extraction_queue_sensor(later), dg.SkipReason)  # nothing new since
    instance = dg.DagsterInstance.ephemeral()
    found = tenant_partitions_sensor(dg.build_sensor_context(instance=instance, resources={"memory_home": resource}))
    assert sorted(r.partition_key for r in found.run_requests) == ["acme", "globex"]


def test_a_sensor_skips_with_its_reason_when_the_service_cannot_answer(served, monkeypatch):
    url, _ = served
    context = dg.build_sensor_context(resources={"memory_home": MemoryHomeResource(url="http://127.0.0.1:9")})
    skipped = tenant_partitions_sensor(context)
    assert isinstance(skipped, dg.SkipReason) and "SERVICE_UNAVAILABLE" in skipped.skip_message
    monkeypatch.delenv("MEMCORE_KEY")
    context = dg.build_sensor_context(resources={"memory_home": MemoryHomeResource(url=url)})
    skipped = extraction_queue_sensor(context)
    assert isinstance(skipped, dg.SkipReason) and "$MEMCORE_KEY" in skipped.skip_message
