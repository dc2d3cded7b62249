"""One run of a Celery job of the platform, for tests/assets/test_celery_executor.py: one tenant
partition launched with ``dg.execute_job`` on the instance of $DAGSTER_HOME (Postgres storage),
its steps sent to ``queue`` on ``broker``. Prints the run's id and outcome as one JSON line.

A process per run, as Dagster's run launcher does: runs orchestrated from threads of one process
deadlock in Python's logging (Dagster reconfigures logging handlers at each run's start).

    python -m tests.celery_run JOB TENANT BROKER QUEUE
"""

from __future__ import annotations

import json
import sys

import dagster as dg

from assets.celery import reconstructable_job, run_config


def main(argv: list[str]) -> int:
    job, tenant, broker, queue = argv
    with dg.DagsterInstance.get() as instance:
        result = dg.execute_job(
            reconstructable_job(job),
            instance,
            run_config=run_config(broker, queue),
            tags={"dagster/partition": tenant},
        )
    print(json.dumps({"tenant": tenant, "run_id": result.run_id, "success": result.success}))
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
