"""`make run`: the conversation partitions, then the main graph, in-process; say where the results are."""

from __future__ import annotations

import json
import sys

import dagster as dg

from memory_core.environment import resolve_home

from .conversations import conversation_partitions
from .definitions import defs

LOGS = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}


def run_conversations(instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    """Every conversation partition in one run (a partition range, as the CLI's backfill makes it),
    with a line per conversation: facts written, or already extracted at this code version."""
    keys = conversation_partitions.get_partition_keys()
    result = defs.resolve_job_def("conversations_job").execute_in_process(
        instance=instance,
        raise_on_error=False,
        run_config=LOGS,
        tags={"dagster/asset_partition_range_start": keys[0], "dagster/asset_partition_range_end": keys[-1]},
    )
    # Each partition's materialization carries the run's whole table: one is enough.
    events = [
        e.step_materialization_data.materialization
        for e in result.get_asset_materialization_events()
        if e.step_materialization_data.materialization.asset_key.to_user_string() == "conversation_extraction"
    ]
    written = events[0].metadata["by_conversation"].value if events else {}
    for key in keys:
        done = written.get(key, "not run")
        print(f"conversation: {key} — {f'{done} facts written' if isinstance(done, int) else done}")
    return result


def main() -> int:
    home = resolve_home().resolve()
    instance = dg.DagsterInstance.get()  # DAGSTER_HOME, set by the Makefile
    conversations = run_conversations(instance)
    if not conversations.success:
        print("the conversation partitions did not materialize; see the log above", file=sys.stderr)
        return 1
    job = defs.resolve_job_def("main")
    result = job.execute_in_process(instance=instance, raise_on_error=False, run_config=LOGS)
    failed_checks = [
        e.asset_check_evaluation_data
        for e in result.all_events
        if e.event_type_value == "ASSET_CHECK_EVALUATION" and not e.asset_check_evaluation_data.passed
    ]
    summary_path = home / "reports" / "timeline_summary.md"
    print()
    print(f"memory home : {home}")
    print(f"store       : {home / 'memory.duckdb'}")
    print(f"summary     : {summary_path}")
    print(f"run history : {instance.root_directory}  (browse with `make ui`)")
    for report in sorted((home / "reports").glob("*/*.md")):  # locomo, coref, observations, resolver
        print(f"report      : {report}")
    print(
        f"notebooks   : .venv/bin/marimo edit notebooks/{{fact_timeline,eval_report,review_queue}}.py -- --home {home}"
    )
    for event in result.get_asset_materialization_events():
        materialization = event.step_materialization_data.materialization
        if "skipped" in materialization.metadata:
            reason = materialization.metadata["reason"].value
            print(f"skipped     : {materialization.asset_key.to_user_string()} — {reason}")
    if summary_path.exists():
        print()
        print(summary_path.read_text())
    if not result.success or failed_checks:
        for check in failed_checks:
            print(f"FAILED CHECK: {check.asset_key.to_user_string()} / {check.check_name}", file=sys.stderr)
        print("the pipeline did not finish cleanly; see the log above", file=sys.stderr)
        return 1
    summary = json.loads((home / "reports" / "timeline_summary.json").read_text())
    print(f"audit chain verifies: {summary['audit']['ok']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
