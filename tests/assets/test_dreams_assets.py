"""The nightly Dreams pass as an asset (assets/dreams.py) on a home built to need every kind of
proposal: it queues them once, writes no memory, and a second run finds nothing new."""

from datetime import datetime, timedelta, timezone

import dagster as dg

from assets.definitions import defs
from assets.dreams import dreams_pass
from assets.resources import EmbedderResource, MemoryHomeResource
from memory_core import FixedClock, Identity, Memory
from memory_core.service import ThreadedServer
from tests.dreams_home import ANA, LOOSE, fill_dreams_home

CONFIG = {"ops": {"dreams_pass": {"config": {"min_cosine": LOOSE}}}}


def resources(home=None, url=""):
    return {
        "memory_home": MemoryHomeResource(home=str(home or ""), url=url),
        "embedder": EmbedderResource(name="hashing"),
    }


def metadata(result):
    return {k: v.value for k, v in result.asset_materializations_for_node("dreams_pass")[0].metadata.items()}


def dreams_home(tmp_path):
    """The home ends a day before now: the asset opens it with the system clock, so the window
    of the last seven days holds its decisions, and only the gym fact is old."""
    home = tmp_path / "home"
    clock = FixedClock(datetime.now(timezone.utc) - timedelta(days=122))
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        fill_dreams_home(memory, clock)
    return home


def versions(home):
    with Memory.open(home, read_only=True) as memory:
        return memory.store.inspection.tables()["memory_versions"]


def test_the_dreams_pass_queues_every_kind_once_and_writes_no_memory(tmp_path):
    home = dreams_home(tmp_path)
    before = versions(home)
    first = dg.materialize([dreams_pass], resources=resources(home), run_config=CONFIG)
    assert first.success
    md = metadata(first)
    assert md["by_kind"] == {"merge": 1, "retire": 1, "age_out": 1, "procedure": 1} and md["proposed"] == 4
    assert versions(home) == before
    with Memory.open(home, read_only=True) as memory:
        pending = memory.for_run(ANA).dream_proposals()
        assert sorted(p.proposal_id for p in pending) == sorted(md["proposals"])
    again = metadata(dg.materialize([dreams_pass], resources=resources(home), run_config=CONFIG))
    assert again["proposed"] == 0 and again["already_queued"] == 4 and again["nothing_new"] == again["namespaces"]


def test_the_dreams_job_and_its_nightly_schedule_are_defined():
    assert defs.resolve_job_def("dreams_job").asset_layer.executable_asset_keys == {dreams_pass.key}
    assert defs.resolve_schedule_def("nightly_dreams").cron_schedule == "30 4 * * *"


def test_through_a_memory_service_the_pass_fails_and_says_where_it_runs(tmp_path, monkeypatch):
    with Memory.open(tmp_path / "served", embedder="hashing") as memory:
        memory.for_run(Identity(tenant="acme", user="ana")).set("city", "Lisbon")
        admin, _ = memory.keys.create(tenant="ops", user="operator", admin=True)
        monkeypatch.setenv("MEMCORE_KEY", admin)
        with ThreadedServer(memory) as server:
            result = dg.materialize([dreams_pass], resources=resources(url=server.url), raise_on_error=False)
    assert not result.success
    [failure] = [e for e in result.all_events if e.is_step_failure]
    assert "no Dreams admin route" in failure.step_failure_data.error.message
