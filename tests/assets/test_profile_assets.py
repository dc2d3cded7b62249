"""The structured_profile worker as an asset (assets/workers.py): it builds each profile once (a
second run writes nothing), and its check passes on a home whose profiles are current and fails
on one where a source was edited after its profile was built."""

import dagster as dg

from assets.definitions import defs
from assets.resources import MemoryHomeResource
from assets.workers import profiles_match_their_sources, structured_profile
from memory_core import Identity, Memory
from memory_core.profiles import PROFILE_KEY

ADMIN = Identity(tenant="t", user="root", admin=True)
ANA = Identity(tenant="t", user="ana")
SCHEMA = {
    "home_city": {"type": "string", "description": "where the user lives", "from": {"keys": ["home-city"]}},
    "likes": {"type": "array", "from": {"memory_types": ["preference"]}},
}


def resources(home):
    return {"memory_home": MemoryHomeResource(home=str(home))}


def metadata(result):
    return {k: v.value for k, v in result.asset_materializations_for_node("structured_profile")[0].metadata.items()}


def profiled_home(tmp_path, build=True):
    """Ana's facts under the tenant's schema; her profile built unless ``build`` is False."""
    home = tmp_path / "home"
    with Memory.open(home) as memory:
        memory.for_run(ADMIN).profile_schema_set(SCHEMA)
        ana = memory.for_run(ANA)
        ana.set("home-city", "Porto")
        ana.set("like-tea", "green tea", memory_type="preference")
        if build:
            memory.build_profiles()
    return home


def edit_a_source(home):
    with Memory.open(home) as memory:
        memory.for_run(ANA).set("home-city", "Lisbon")


def test_the_asset_builds_each_profile_once_and_again_only_after_a_change(tmp_path):
    home = profiled_home(tmp_path, build=False)
    first = dg.materialize([structured_profile], resources=resources(home))
    md = metadata(first)
    assert first.success and md["absent"] == 1 and md["built"] == 1 and md["behind"] == ["t/user/ana"]
    again = metadata(dg.materialize([structured_profile], resources=resources(home)))
    assert again["current"] == 1 and again["built"] == 0  # nothing changed: nothing written
    edit_a_source(home)
    third = metadata(dg.materialize([structured_profile], resources=resources(home)))
    assert third["stale"] == 1 and third["built"] == 1
    with Memory.open(home) as memory:
        ana = memory.for_run(ANA)
        assert ana.profile().properties == {"home_city": "Lisbon", "likes": ["green tea"]}
        assert [v.op.value for v in ana.history(PROFILE_KEY)] == ["set", "supersede", "set"]


def test_the_check_passes_on_current_profiles_and_fails_on_a_stale_one(tmp_path):
    home = profiled_home(tmp_path)
    result = profiles_match_their_sources(**resources(home))
    assert result.passed and result.metadata["current"].value == 1
    edit_a_source(home)  # after the profile was built
    failed = profiles_match_their_sources(**resources(home))
    assert not failed.passed and failed.metadata["stale"].value == 1
    assert failed.metadata["behind"].value == ["t/user/ana"]
    with Memory.open(home) as memory:  # the check wrote nothing: the profile is as it was
        assert memory.for_run(ANA).profile().properties["home_city"] == "Porto"


def test_the_check_fails_while_a_profile_was_never_built(tmp_path):
    failed = profiles_match_their_sources(**resources(profiled_home(tmp_path, build=False)))
    assert not failed.passed and failed.metadata["absent"].value == 1


def test_the_worker_has_a_job_and_a_schedule_and_stays_out_of_the_main_job():
    job = defs.resolve_job_def("structured_profile_job")
    assert {n.name for n in job.nodes} == {"structured_profile", "structured_profile_profiles_match_their_sources"}
    assert "structured_profile_job" in {s.job.name for s in defs.schedules}
    assert "structured_profile" not in {n.name for n in defs.resolve_job_def("main").nodes}


def test_the_worker_runs_through_a_memory_service(tmp_path, monkeypatch):
    from memory_core.service import ThreadedServer

    home = profiled_home(tmp_path, build=False)
    with Memory.open(home) as memory:
        key, _ = memory.keys.create(tenant="ops", user="operator", admin=True, label="dagster")
        monkeypatch.setenv("MEMCORE_KEY", key)
        with ThreadedServer(memory) as server:
            served = {"memory_home": MemoryHomeResource(url=server.url)}
            assert not profiles_match_their_sources(**served).passed
            result = dg.materialize([structured_profile], resources=served)
            assert result.success and metadata(result)["built"] == 1
            assert profiles_match_their_sources(**served).passed
