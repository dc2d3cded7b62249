"""`make run`: observe the sources, then materialize what is missing or stale (the conversation
partitions first, then the main graph), in-process; say what ran, what was fresh, and where the
results are. A second run with nothing changed materializes nothing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import dagster as dg

from memory_core.environment import resolve_home

from .conversations import conversation_partitions
from .definitions import defs
from .staleness import AssetStatus, children_of, partition_ranges, plan, status_of, statuses_by_partition

LOGS = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
CONVERSATION_ASSETS = ("conversation_corpus", "conversation_extraction")


def observe_sources(instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    """One observation of every source; a line per source with the version its downstream will see."""
    result = defs.resolve_job_def("observe_sources").execute_in_process(
        instance=instance, raise_on_error=False, run_config=LOGS
    )
    for event in result.all_events:
        if event.event_type_value == "ASSET_OBSERVATION":
            observation = event.asset_observation_data.asset_observation
            version = observation.tags.get("dagster/data_version", "?")
            print(f"source      : {observation.asset_key.to_user_string()} — {version}")
    return result


def conversations_to_run(instance: dg.DagsterInstance) -> dict[str, str]:
    """Each conversation partition not fresh (either of its two assets), with why."""
    keys = conversation_partitions.get_partition_keys()
    owed: dict[str, str] = {}
    for key, statuses in statuses_by_partition(instance, defs, CONVERSATION_ASSETS, keys).items():
        for status in statuses.values():
            if status.status != "FRESH":
                owed.setdefault(key, status.why)
    return owed


def run_conversations(instance: dg.DagsterInstance, owed: dict[str, str]) -> bool:
    """The owed partitions, a run per range of consecutive keys (the CLI's backfill makes the same
    runs), with a line per conversation: facts written, already extracted, or fresh and not run."""
    keys = conversation_partitions.get_partition_keys()
    written: dict[str, int | str] = {}
    ok = True
    for start, end in partition_ranges(keys, owed):
        result = defs.resolve_job_def("conversations_job").execute_in_process(
            instance=instance,
            raise_on_error=False,
            run_config=LOGS,
            tags={"dagster/asset_partition_range_start": start, "dagster/asset_partition_range_end": end},
        )
        ok = ok and result.success
        # Each partition's materialization carries the run's whole table: one is enough.
        for event in result.get_asset_materialization_events():
            materialization = event.step_materialization_data.materialization
            if materialization.asset_key.to_user_string() == "conversation_extraction":
                written |= materialization.metadata["by_conversation"].value
                break
    for key in keys:
        if key not in owed:
            print(f"conversation: {key} — fresh, not run")
            continue
        done = written.get(key, "did not run")
        if isinstance(done, str) and done.startswith("skipped: "):
            done = done.partition(";")[0]  # where it looked; the advice is in the asset's metadata
        print(f"conversation: {key} — {owed[key]}: {f'{done} facts written' if isinstance(done, int) else done}")
    return ok


def main_assets() -> list[str]:
    return sorted(k.to_user_string() for k in defs.resolve_job_def("main").asset_layer.selected_asset_keys)


def main_statuses(instance: dg.DagsterInstance) -> dict[str, AssetStatus]:
    return status_of(instance, defs, main_assets())


def run_main(instance: dg.DagsterInstance) -> tuple[dg.ExecuteInProcessResult | None, list[str]]:
    """What of the main graph is not fresh, and its downstream, in one run; nothing when all is fresh."""
    statuses = main_statuses(instance)
    chosen = plan(statuses, children_of(defs, statuses))
    for name in sorted(statuses):
        status = statuses[name]
        if name in chosen:
            why = status.why if status.status != "FRESH" else "downstream of a rematerialized asset"
            print(f"materialize : {name} — {why}")
    fresh = len(statuses) - len(chosen)
    if not chosen:
        print(f"fresh       : all {fresh} assets of the main graph; nothing to materialize")
        return None, chosen
    print(f"fresh       : {fresh} of {len(statuses)} assets, not run")
    job = defs.resolve_job_def("main")
    result = job.execute_in_process(
        instance=instance, raise_on_error=False, run_config=LOGS, asset_selection=[dg.AssetKey(n) for n in chosen]
    )
    return result, chosen


def print_skipped(instance: dg.DagsterInstance) -> None:
    """Assets whose latest materialization was a skip (their data was missing), run now or before."""
    for name in main_assets():
        event = instance.get_latest_materialization_event(dg.AssetKey(name))
        metadata = event.asset_materialization.metadata if event and event.asset_materialization else {}
        if "skipped" in metadata:
            print(f"skipped     : {name} — {metadata['reason'].value}")


def print_locations(home: Path, instance: dg.DagsterInstance) -> None:
    print()
    print(f"memory home : {home}")
    print(f"store       : {home / 'memory.duckdb'}")
    print(f"summary     : {home / 'reports' / 'timeline_summary.md'}")
    print(f"run history : {instance.root_directory}  (browse with `make ui`)")
    for report in sorted((home / "reports").glob("*/*.md")):  # locomo, coref, observations, resolver
        print(f"report      : {report}")
    print(
        f"notebooks   : .venv/bin/marimo edit notebooks/{{fact_timeline,eval_report,review_queue}}.py -- --home {home}"
    )


def main() -> int:
    home = resolve_home().resolve()
    instance = dg.DagsterInstance.get()  # DAGSTER_HOME, set by the Makefile
    if not observe_sources(instance).success:
        print("the sources could not be observed; see the log above", file=sys.stderr)
        return 1
    if not run_conversations(instance, conversations_to_run(instance)):
        print("the conversation partitions did not materialize; see the log above", file=sys.stderr)
        return 1
    result, _ = run_main(instance)
    failed_checks = [
        e.asset_check_evaluation_data
        for e in (result.all_events if result else [])
        if e.event_type_value == "ASSET_CHECK_EVALUATION" and not e.asset_check_evaluation_data.passed
    ]
    print_locations(home, instance)
    print_skipped(instance)
    summary_path = home / "reports" / "timeline_summary.md"
    if summary_path.exists():
        print()
        print(summary_path.read_text())
    if (result and not result.success) or failed_checks:
        for check in failed_checks:
            print(f"FAILED CHECK: {check.asset_key.to_user_string()} / {check.check_name}", file=sys.stderr)
        print("the pipeline did not finish cleanly; see the log above", file=sys.stderr)
        return 1
    summary = json.loads((home / "reports" / "timeline_summary.json").read_text())
    print(f"audit chain verifies: {summary['audit']['ok']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
