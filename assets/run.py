"""`make run`: materialize the main graph in-process and say where the results are."""

from __future__ import annotations

import json
import sys

import dagster as dg

from memory_core.environment import resolve_home

from .definitions import defs


def main() -> int:
    home = resolve_home().resolve()
    instance = dg.DagsterInstance.get()  # DAGSTER_HOME, set by the Makefile
    job = defs.resolve_job_def("main")
    result = job.execute_in_process(
        instance=instance,
        raise_on_error=False,
        run_config={"loggers": {"console": {"config": {"log_level": "INFO"}}}},
    )
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
