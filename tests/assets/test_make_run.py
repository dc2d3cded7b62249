"""`make run` materializes what is missing or stale and nothing else: a second run with nothing
changed runs no asset; data appearing for a skipped evaluation, or a new home, turns exactly their
downstream stale."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg

from assets.definitions import defs
from assets.staleness import AssetStatus, partition_ranges, plan, status_of

REPO = Path(__file__).resolve().parents[2]
WRITERS = {"timeline_memory", "placed_facts", "guide_documents", "resolver_demo_statements", "extraction_queue_drain"}


def _make_run(env: dict[str, str]) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "assets.run"], cwd=REPO, env=env, capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, (done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


def _runs_by_job(instance: dg.DagsterInstance) -> dict[str, int]:
    counts: dict[str, int] = {}
    for run in instance.get_runs():
        counts[run.job_name] = counts.get(run.job_name, 0) + 1
    return counts


def _main_statuses(instance: dg.DagsterInstance) -> dict[str, str]:
    names = sorted(k.to_user_string() for k in defs.resolve_job_def("main").asset_layer.selected_asset_keys)
    return {name: s.status for name, s in status_of(instance, defs, names).items()}


def _observe(instance: dg.DagsterInstance) -> None:
    assert defs.resolve_job_def("observe_sources").execute_in_process(instance=instance).success


def test_a_second_make_run_materializes_nothing_and_new_data_or_a_new_home_turns_stale(tmp_path, monkeypatch):
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    shutil.copy(REPO / "dagster.yaml", dagster_home / "dagster.yaml")  # as the Makefile does
    shared = tmp_path / "shared"  # no corpora yet: the LoCoMo evaluations are skipped
    env = {k: v for k, v in os.environ.items() if k not in ("MEMCORE_URL", "MEMCORE_KEY")}
    env |= {
        "DAGSTER_HOME": str(dagster_home),
        "MEMCORE_HOME": str(tmp_path / "home"),
        "MEMCORE_SHARED": str(shared),
        "HF_HUB_OFFLINE": "1",
    }
    first = _make_run(env)
    assert "materialize : retrieval_index — never materialized" in first
    assert "skipped     : locomo_recall — LoCoMo data not found" in first
    assert "conversation: conv-26 — never materialized: skipped: LoCoMo data not found at" in first

    second = _make_run(env)
    assert "fresh       : all 14 assets of the main graph; nothing to materialize" in second, second
    assert "materialize :" not in second
    assert all(f"conversation: {key} — fresh, not run" in second for key in ("syn-00", "syn-03", "conv-26")), second
    assert "skipped     : locomo_recall — LoCoMo data not found" in second  # the skip is still reported
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        # The second run observed the sources and launched nothing else.
        assert _runs_by_job(instance) == {"observe_sources": 2, "conversations_job": 1, "main": 1}

        for name, value in env.items():
            monkeypatch.setenv(name, value)
        # The LoCoMo file appears: the two evaluations that read it turn stale, nothing else.
        (shared / "corpora" / "locomo").mkdir(parents=True)
        (shared / "corpora" / "locomo" / "locomo_dev.json").write_text("[]")
        _observe(instance)
        statuses = status_of(instance, defs, ["locomo_recall", "extraction_observation_recall", "retrieval_index"])
        assert statuses["locomo_recall"].status == "STALE"
        assert any("(locomo_dev)" in cause for cause in statuses["locomo_recall"].causes)
        assert statuses["extraction_observation_recall"].status == "STALE"
        assert statuses["retrieval_index"].status == "FRESH"
        corpus = status_of(instance, defs, ["conversation_corpus"], "conv-26")["conversation_corpus"]
        assert corpus.status == "STALE"  # the skipped LoCoMo partitions run again

        # The home is deleted and made again: another identity, so every writer of it is stale.
        shutil.rmtree(tmp_path / "home")
        _observe(instance)
        stale = {name for name, status in _main_statuses(instance).items() if status == "STALE"}
        assert WRITERS <= stale
        assert {"timeline_corpus", "placement_corpus", "resolver_pairs_corpus"}.isdisjoint(stale)
        for key in ("syn-00", "syn-03"):
            assert status_of(instance, defs, ["conversation_extraction"], key)["conversation_extraction"].status == (
                "STALE"
            )


def test_the_plan_takes_what_is_not_fresh_and_everything_downstream_of_it():
    statuses = {
        name: AssetStatus(name, status)
        for name, status in {
            "corpus": "FRESH",
            "writer": "STALE",
            "index": "FRESH",
            "eval": "FRESH",
            "other": "FRESH",
        }.items()
    }
    children = {"corpus": {"writer"}, "writer": {"index"}, "index": {"eval", "outside"}, "other": set()}
    # `outside` is downstream but not in the selection: it is left to its own job.
    assert plan(statuses, children) == ["eval", "index", "writer"]
    assert plan({n: AssetStatus(n, "FRESH") for n in statuses}, children) == []
    assert plan(
        {"corpus": AssetStatus("corpus", "MISSING"), **{n: statuses[n] for n in ("writer", "index")}}, children
    ) == [
        "corpus",
        "index",
        "writer",
    ]


def test_partition_ranges_are_the_fewest_runs_of_consecutive_keys():
    keys = ["syn-00", "syn-01", "syn-02", "syn-03"]
    assert partition_ranges(keys, []) == []
    assert partition_ranges(keys, keys) == [("syn-00", "syn-03")]
    assert partition_ranges(keys, ["syn-03", "syn-00", "syn-01"]) == [("syn-00", "syn-01"), ("syn-03", "syn-03")]
    assert partition_ranges(keys, ["syn-02", "elsewhere"]) == [("syn-02", "syn-02")]


def test_the_index_is_requested_once_a_table_it_is_built_from_changes():
    """The eager condition on the index, evaluated as the automation sensor would: nothing while
    every upstream is as the index saw it, the index once a writer materializes again."""
    instance = dg.DagsterInstance.ephemeral()
    graph = defs.resolve_asset_graph()
    index = dg.AssetKey("retrieval_index")
    for parent in graph.get(index).parent_keys:
        if graph.get(parent).is_observable:
            instance.report_runless_asset_event(dg.AssetObservation(parent, tags={"dagster/data_version": "v1"}))
        else:
            partitions = graph.get(parent).partitions_def
            for key in partitions.get_partition_keys() if partitions else [None]:
                instance.report_runless_asset_event(dg.AssetMaterialization(parent, partition=key))
    instance.report_runless_asset_event(dg.AssetMaterialization(index))
    selection = dg.AssetSelection.assets(index)
    quiet = dg.evaluate_automation_conditions(defs=defs, instance=instance, asset_selection=selection)
    assert quiet.total_requested == 0
    again = dg.evaluate_automation_conditions(
        defs=defs, instance=instance, asset_selection=selection, cursor=quiet.cursor
    )
    assert again.total_requested == 0  # nothing changed between the two evaluations
    instance.report_runless_asset_event(dg.AssetMaterialization(dg.AssetKey("timeline_memory")))
    changed = dg.evaluate_automation_conditions(
        defs=defs, instance=instance, asset_selection=selection, cursor=again.cursor
    )
    assert changed.total_requested == 1
    assert changed.get_requested_partitions(index) == {None}
