"""The background workers as assets (assets/workers.py), each on a home built to need it: the
worker does its work once (a second run changes nothing), and its check passes on a healthy home
and fails on the broken one."""

import dagster as dg

from assets.definitions import defs
from assets.resources import EmbedderResource, MemoryHomeResource
from assets.workers import (
    calibration_matches_embedder,
    communities_match_the_graph,
    entity_communities,
    no_orphan_index_rows,
    orphan_vector_reconcile,
    recalibration,
    sensitivity_labels_match_detection,
    sensitivity_sweep,
)
from memory_core import Identity, Memory, Scope
from tests.index_faults import IndexFaults

CARD = "my card is 4111 1111 1111 1111"  # a Luhn-valid card number: detection says high


def resources(home, embedder="hashing"):
    return {"memory_home": MemoryHomeResource(home=str(home)), "embedder": EmbedderResource(name=embedder)}


def metadata(result, node):
    return {k: v.value for k, v in result.asset_materializations_for_node(node)[0].metadata.items()}


def check(check_fn, home, embedder="hashing"):
    return check_fn(**resources(home, embedder))


def write_facts(memory, tenant="t", n=10):
    tool = memory.for_run(Identity(tenant=tenant, user="u"))
    for i in range(n):
        tool.set(f"k{i}", f"fact number {i} about subject {i * 7} in {tenant}")
    return tool


# -- orphan_vector_reconcile -------------------------------------------------------------------


def orphaned_home(tmp_path):
    """Two facts deleted while the index write failed (a full disk): their rows stay in the index,
    and the failure is recorded; the watermark moves on, so reopening does not heal them."""
    home = tmp_path / "home"
    lance = IndexFaults()
    with Memory.open(home, embedder="hashing", open_index=lance.open_index) as memory:
        tool = write_facts(memory)
        memory.flush()
        lance.failing = OSError("no space left on device")
        deleted = {tool.delete("k1").rows[0].fact_id, tool.delete("k2").rows[0].fact_id}
        tool.set("k-new", "written while the index failed")  # an index append, so the write fails
        memory.flush()
        lance.failing = None
    return home, deleted


def test_orphan_reconcile_drops_rows_of_deleted_facts_once(tmp_path):
    home, deleted = orphaned_home(tmp_path)
    assert not check(no_orphan_index_rows, home).passed
    first = dg.materialize([orphan_vector_reconcile], resources=resources(home))
    assert first.success
    md = metadata(first, "orphan_vector_reconcile")
    assert md["orphans"] == 2 and md["retired"] == 2 and md["removed"] == 2
    assert set(md["orphan_ids"]) == deleted
    again = metadata(dg.materialize([orphan_vector_reconcile], resources=resources(home)), "orphan_vector_reconcile")
    assert again["orphans"] == 0 and again["removed"] == 0
    with Memory.open(home, embedder="hashing") as memory:
        report = memory.projector.consistency()
        assert not report.extra and report.index_rows == 8
        assert memory.store.versions.latest_states(sorted(deleted))  # the log keeps them: index only
        assert report.missing == report.pending_repair  # the failed write itself: repair's work


def test_orphan_check_passes_on_a_healthy_home_and_fails_on_an_orphan(tmp_path):
    healthy = tmp_path / "healthy"
    with Memory.open(healthy, embedder="hashing") as memory:
        write_facts(memory).delete("k3")
    result = check(no_orphan_index_rows, healthy)
    assert result.passed and result.metadata["orphans"].value == 0
    home, deleted = orphaned_home(tmp_path)
    failed = check(no_orphan_index_rows, home)
    assert not failed.passed and failed.metadata["orphans"].value == 2
    assert set(failed.metadata["orphan_ids"].value) == deleted


# -- sensitivity_sweep ---------------------------------------------------------------------------


def under_labelled_home(tmp_path):
    """A card number stored as ``normal`` (as a build whose detection lacked the pattern would
    have), and indexed under that label."""
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        tool = write_facts(memory, n=3)
        fact = tool.set("payment", CARD).version
        assert fact.sensitivity == "high"
        memory.store.unchecked_sql("UPDATE memory_versions SET sensitivity = 'normal' WHERE id = ?", [fact.id])
        memory.reindex()
        assert memory.projector.consistency().index_rows == 4  # the card's row is served
    return home, fact


def test_sensitivity_sweep_relabels_and_unindexes_once(tmp_path):
    home, fact = under_labelled_home(tmp_path)
    first = dg.materialize([sensitivity_sweep], resources=resources(home))
    md = metadata(first, "sensitivity_sweep")
    assert first.success and md["under_labelled"] == 1 and md["relabelled"] == 1 and md["made_high"] == 1
    again = metadata(dg.materialize([sensitivity_sweep], resources=resources(home)), "sensitivity_sweep")
    assert again["under_labelled"] == 0 and again["relabelled"] == 0
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        history = tool.history("payment")
        assert [(v.op.value, v.sensitivity) for v in history] == [("set", "normal"), ("relabel", "high")]
        assert history[-1].value == CARD and history[-1].changed_by == "worker:sensitivity-sweep"
        report = memory.projector.consistency()
        assert report.ok and report.index_rows == 3  # the card's row left the index
        assert not [h for h in tool.search("card 4111").hits if h.key == "payment"]
        audit = memory.store.unchecked_sql("SELECT actor FROM audit_log WHERE op = 'relabel'")
        assert audit == [{"actor": "worker:sensitivity-sweep"}]


def test_sensitivity_check_passes_when_labels_match_and_fails_under_a_lower_label(tmp_path):
    healthy = tmp_path / "healthy"
    with Memory.open(healthy, embedder="hashing") as memory:
        write_facts(memory, n=3).set("payment", CARD)  # detected at the write: high
    assert check(sensitivity_labels_match_detection, healthy).passed
    home, fact = under_labelled_home(tmp_path)
    failed = check(sensitivity_labels_match_detection, home)
    assert not failed.passed and failed.metadata["fact_ids"].value == [fact.fact_id]


# -- recalibration -------------------------------------------------------------------------------


def test_recalibration_writes_each_tenants_threshold_once_and_the_write_path_uses_it(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        write_facts(memory, "acme", n=12)
        write_facts(memory, "globex", n=3)  # too few of its own: measured on the home's values
        memory.for_run(Identity(tenant="initech", user="ops", admin=True)).configure(conflict_threshold=0.9)
        write_facts(memory, "initech", n=9)
    assert not check(calibration_matches_embedder, home).passed
    first = dg.materialize([recalibration], resources=resources(home))
    md = metadata(first, "recalibration")
    assert first.success and md["tenants"] == 3 and md["written"] == 3 and md["status_absent"] == 3
    again = metadata(dg.materialize([recalibration], resources=resources(home)), "recalibration")
    assert again["written"] == 0 and again["status_current"] == 3
    assert check(calibration_matches_embedder, home).passed
    with Memory.open(home, embedder="hashing") as memory:
        plans = {p["tenant"]: p for p in memory.recalibrate(apply=False)}
        assert plans["globex"]["basis"] == "home" and plans["acme"]["basis"] == "tenant"
        acme = memory.write_config("acme").tenant
        assert acme.calibrated_embedder == "hashing-256" and acme.conflict_threshold is None
        assert 0.6 <= acme.calibrated_threshold <= 0.92
        assert memory.session.calibration("acme") == acme.calibrated_threshold  # the write path's fallback
        initech = memory.write_config("initech").tenant
        assert initech.conflict_threshold == 0.9  # a person's own setting is left alone, and wins
        written = memory.for_run(Identity(tenant="acme", user="u")).set("k-new", "fact number 3 about subject 21")
        assert written.details["threshold"] == {"value": acme.calibrated_threshold, "source": "embedder"}
        audits = memory.store.unchecked_sql("SELECT tenant, actor FROM audit_log WHERE op = 'configure' ORDER BY 1")
        assert [a for a in audits if a["actor"] == "agent:recalibration"] == [
            {"tenant": t, "actor": "agent:recalibration"} for t in ("acme", "globex", "initech")
        ]


def test_calibration_check_fails_for_another_embedder(tmp_path):
    home = tmp_path / "home"
    with Memory.open(home, embedder="hashing") as memory:
        write_facts(memory, n=10)
        memory.recalibrate()
    assert check(calibration_matches_embedder, home).passed
    failed = check(calibration_matches_embedder, home, embedder="static")
    assert not failed.passed and failed.metadata["uncalibrated"].value == ["t"]
    assert failed.metadata["status_other_embedder"].value == 1


# -- entity_communities --------------------------------------------------------------------------

TIES = [("ana", "bo"), ("bo", "cy"), ("cy", "ana"), ("dan", "eve"), ("eve", "fay"), ("fay", "dan"), ("cy", "dan")]


def graph_home(tmp_path):
    """Two triangles of people who know each other, one tie between them."""
    home = tmp_path / "home"
    with Memory.open(home) as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        for a, b in TIES:
            tool.set(f"knows-{a}-{b}", f"{a} knows {b}", relations=[[a, "knows", b]])
    return home


def test_entity_communities_are_found_once_and_again_only_when_the_graph_changes(tmp_path):
    home = graph_home(tmp_path)
    first = dg.materialize([entity_communities], resources=resources(home))
    md = metadata(first, "entity_communities")
    assert first.success and md["absent"] == 1 and md["computed"] == 1 and md["communities"] == 2
    again = metadata(dg.materialize([entity_communities], resources=resources(home)), "entity_communities")
    assert again["current"] == 1 and again["computed"] == 0  # the graph did not change: nothing to do
    with Memory.open(home) as memory:
        ns = Identity(tenant="t", user="u").namespace(Scope.USER)
        kept = memory.store.communities.stored(ns)
        assert kept["communities"] == [["ana", "bo", "cy"], ["dan", "eve", "fay"]]
        assert kept["entities"] == 6 and kept["edges"] == 7 and kept["algorithm"] == "louvain"
        memory.for_run(Identity(tenant="t", user="u")).set(
            "knows-gil", "gil knows ana", relations=[["gil", "knows", "ana"]]
        )
    third = metadata(dg.materialize([entity_communities], resources=resources(home)), "entity_communities")
    assert third["stale"] == 1 and third["computed"] == 1 and third["behind"] == ["t/user/u"]
    with Memory.open(home) as memory:
        assert ["ana", "bo", "cy", "gil"] in memory.store.communities.stored(ns)["communities"]


def test_communities_check_passes_when_current_and_fails_when_the_graph_moved_on(tmp_path):
    home = graph_home(tmp_path)
    assert not communities_match_the_graph(memory_home=MemoryHomeResource(home=str(home))).passed  # never computed
    with Memory.open(home) as memory:
        memory.detect_communities()
    result = communities_match_the_graph(memory_home=MemoryHomeResource(home=str(home)))
    assert result.passed and result.metadata["current"].value == 1
    with Memory.open(home) as memory:
        memory.for_run(Identity(tenant="t", user="u")).delete("knows-cy-dan")  # the bridge ends
    failed = communities_match_the_graph(memory_home=MemoryHomeResource(home=str(home)))
    assert not failed.passed and failed.metadata["behind"].value == ["t/user/u"]


def test_workers_have_jobs_and_schedules_and_stay_out_of_the_main_job():
    schedules = {s.name: s.job.name for s in defs.schedules}
    checks = {
        "orphan_vector_reconcile": "no_orphan_index_rows",
        "sensitivity_sweep": "sensitivity_labels_match_detection",
        "recalibration": "calibration_matches_embedder",
        "entity_communities": "communities_match_the_graph",
    }
    for asset, check_name in checks.items():
        job = defs.resolve_job_def(f"{asset}_job")
        assert {n.name for n in job.nodes} == {asset, f"{asset}_{check_name}"}  # the check runs after it
        assert f"{asset}_job" in schedules.values()
    main = defs.resolve_job_def("main")
    assert not set(checks) & {n.name for n in main.nodes}


def test_the_workers_run_through_a_memory_service(tmp_path, monkeypatch):
    from memory_core.service import ThreadedServer

    home, deleted = orphaned_home(tmp_path)
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="t", user="u"))
        tool.set("knows-ana-bo", "ana knows bo", relations=[["ana", "knows", "bo"]])
        admin, _ = memory.keys.create(tenant="ops", user="operator", admin=True, label="dagster")
        monkeypatch.setenv("MEMCORE_KEY", admin)
        with ThreadedServer(memory) as server:
            served = {"memory_home": MemoryHomeResource(url=server.url), "embedder": EmbedderResource(name="hashing")}
            result = dg.materialize(
                [orphan_vector_reconcile, sensitivity_sweep, recalibration, entity_communities], resources=served
            )
            assert result.success
            assert metadata(result, "orphan_vector_reconcile")["removed"] == 2
            assert metadata(result, "recalibration")["written"] == 1
            assert metadata(result, "entity_communities")["computed"] == 1
            for name in (no_orphan_index_rows, sensitivity_labels_match_detection, calibration_matches_embedder):
                assert name(**served).passed
            assert communities_match_the_graph(memory_home=served["memory_home"]).passed
