"""The platform's jobs on Celery workers (the scale-out path: Postgres run storage, the Celery
executor on a RabbitMQ broker, tenants as partitions; docs/scaling_dagster.md).

A job here is one of ``jobs`` with its steps sent to the workers listening on a queue instead of
run in the run's process. The broker is read here, in the platform's config layer (never inside
memory_core): ``$MEMCORE_BROKER_URL``, else the local RabbitMQ. The in-process jobs stay as they
are: `make run`, the sensors and the schedules use those.

Only jobs whose steps may run side by side in separate processes go on Celery: on the embedded
home DuckDB admits one writer process, and a reader cannot open the file while a writer holds it.
``tenant_report`` only reads, one tenant per partition, so the partitions of a backfill spread over
the workers. A job whose steps write belongs here once the home is served (``MEMCORE_URL``: the
assets go through the memory service) or the authority is PostgreSQL.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import dagster as dg
from dagster_celery import celery_executor

from .jobs import tenant_report_job

if TYPE_CHECKING:  # what define_asset_job returns (dagster does not export the name)
    from dagster._core.definitions.unresolved_asset_job_definition import UnresolvedAssetJobDefinition

BROKER_ENV = "MEMCORE_BROKER_URL"
DEFAULT_BROKER = "amqp://guest:guest@127.0.0.1:5672//"
# The queue the steps are sent to; a worker listens on it with `-q` (dagster-celery's default).
DEFAULT_QUEUE = "dagster"


def broker_url() -> str:
    """The broker the jobs send their steps to: ``$MEMCORE_BROKER_URL``, else the local RabbitMQ."""
    return os.environ.get(BROKER_ENV, "").strip() or DEFAULT_BROKER


def executor_config(broker: str | None = None, queue: str = DEFAULT_QUEUE) -> dict[str, Any]:
    """The Celery executor's config: where the steps go (the broker and the queue) and where their
    results come back (RabbitMQ itself, ``rpc://``)."""
    return {
        "broker": broker or broker_url(),
        "backend": "rpc://",
        "config_source": {"task_default_queue": queue},
    }


def run_config(broker: str | None = None, queue: str = DEFAULT_QUEUE) -> dict[str, Any]:
    """Run config that sends a run's steps to ``queue`` on ``broker`` (default: ``broker_url()``)."""
    return {"execution": {"config": executor_config(broker, queue)}}


def on_celery(job: UnresolvedAssetJobDefinition, description: str = "") -> UnresolvedAssetJobDefinition:
    """``job`` with its steps run by Celery workers: the same assets and partitions, named
    ``<name>_celery_job``. Its default run config names the broker (read when the definitions load)
    and the default queue; run config given at launch replaces it."""
    return dg.define_asset_job(
        f"{job.name.removesuffix('_job')}_celery_job",
        selection=job.selection,
        partitions_def=job.partitions_def,
        executor_def=celery_executor,
        config=run_config(),
        description=f"{description or job.description or job.name} Its steps run on Celery workers.",
        tags=job.tags,
    )


# Tenants are the partitions: a backfill over them is one run per tenant, each step on a worker.
tenant_report_celery_job = on_celery(tenant_report_job, "One tenant's report (a tenant partition).")

CELERY_JOBS = (tenant_report_celery_job,)


def resolve_job(name: str) -> dg.JobDefinition:
    """A job of ``defs``, its resources bound: what each worker rebuilds to run a step."""
    from .definitions import defs  # here, not at the top: the definitions import this module

    return defs.resolve_job_def(name)


def reconstructable_job(name: str):
    """The job ``name`` of ``defs`` as Celery needs it (each worker imports and rebuilds it): pass it
    to ``dg.execute_job`` with an instance whose storage the workers reach too (Postgres)."""
    return dg.build_reconstructable_job("assets.celery", "resolve_job", reconstructable_args=(name,))
