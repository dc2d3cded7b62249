"""The platform beyond one process: a real platform job (``tenant_report_celery_job``, tenants as
partitions) run with the Celery executor on the RabbitMQ broker, its runs recorded in Postgres run
storage (the instance of deploy/dagster-postgres.yaml as it is, its tables in a schema made for the
test), its steps executed by two ``dagster-celery`` worker processes started here (deploy/celery.yaml,
a queue of the test's own) and stopped at the end.

Needs PostgreSQL ($MEMCORE_TEST_PG_URL) and RabbitMQ ($MEMCORE_TEST_BROKER_URL): skipped without
them, failed without them under CI=true (tests/services.py).
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import unquote, urlsplit

import dagster as dg
import pytest

from assets.celery import BROKER_ENV
from memory_core import Identity, Memory
from tests.services import broker_url_or_skip, pg_url_or_skip

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
JOB = "tenant_report_celery_job"
FACTS = {"acme": 3, "globex": 5}  # tenant: facts written
TENANTS = tuple(FACTS)
WORKER_LIFETIME_S = 150  # each worker is ended by `timeout` after this, whatever happens to the test
READY_S = 45
STOP_S = 10
RUN_S = 90  # each run's process is ended by `timeout` after this


@pytest.fixture
def pg_schema():
    """A fresh schema in the test database for Dagster's storage, dropped afterwards (a schema,
    not a database: CREATE and DROP DATABASE each wait for a checkpoint, seconds on a busy server)."""
    import psycopg

    url = pg_url_or_skip()
    schema = f"memcore_dagster_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True, connect_timeout=3) as connection:
        connection.execute(f'CREATE SCHEMA "{schema}"')
    try:
        yield url, schema
    finally:
        with psycopg.connect(url, autocommit=True, connect_timeout=3) as connection:
            connection.execute("SET lock_timeout = '10s'")
            connection.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')


@pytest.fixture
def broker():
    """The broker, and a queue of the test's own on it (deleted afterwards, with its exchange)."""
    from kombu import Connection

    url = broker_url_or_skip()
    queue = f"memcore-test-{uuid.uuid4().hex[:8]}"
    try:
        yield url, queue
    finally:
        with Connection(url, connect_timeout=3) as connection:
            connection.default_channel.queue_delete(queue)
            connection.default_channel.exchange_delete(queue)


@pytest.fixture
def dagster_home(tmp_path, pg_schema, monkeypatch):
    """DAGSTER_HOME holding deploy/dagster-postgres.yaml as it is; $DAGSTER_PG_* name the test
    database and $PGOPTIONS puts Dagster's tables in the test's schema (libpq reads it in every
    process: this one, the runs' and the workers')."""
    home = tmp_path / "dagster"
    home.mkdir()
    shutil.copy(REPO / "deploy" / "dagster-postgres.yaml", home / "dagster.yaml")
    pg_url, schema = pg_schema
    url = urlsplit(pg_url)
    parts = {
        "HOST": url.hostname or "127.0.0.1",
        "PORT": str(url.port or 5432),
        "DB": url.path.lstrip("/") or "postgres",
        "USER": unquote(url.username or getpass.getuser()),
        "PASSWORD": unquote(url.password or ""),
    }
    for part, value in parts.items():
        monkeypatch.setenv(f"DAGSTER_PG_{part}", value)
    monkeypatch.setenv("PGOPTIONS", f"-c search_path={schema}")
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    # Dagster makes its tables on first use: two workers starting at once on an empty schema both
    # try, and one fails ('type "alembic_version" already exists'). Made here, before they start.
    instance = dg.DagsterInstance.get()
    try:
        instance.get_runs(limit=1)
        instance.event_log_storage.get_event_records(dg.EventRecordsFilter(dg.DagsterEventType.RUN_START), limit=1)
        instance.all_instigator_state()
    finally:
        instance.dispose()
    return home


@pytest.fixture
def memory_home(tmp_path, monkeypatch):
    """A memory home with facts for two tenants; the workers find it through $MEMCORE_HOME."""
    home = tmp_path / "memory"
    with Memory.open(home) as memory:
        for tenant, n in FACTS.items():
            tool = memory.for_run(Identity(tenant=tenant, user="u"))
            tool.bulk_set([{"key": f"k{i}", "value": f"fact {i} of {tenant}"} for i in range(n)])
    monkeypatch.setenv("MEMCORE_HOME", str(home))
    monkeypatch.delenv("MEMCORE_URL", raising=False)
    return home


def child_env(broker_url: str) -> dict[str, str]:
    """The environment of the workers and the run processes: this one's (DAGSTER_HOME, the
    DAGSTER_PG_* of the test's database, MEMCORE_HOME), the broker, no memory service."""
    env = {k: v for k, v in os.environ.items() if k not in ("MEMCORE_URL", "MEMCORE_KEY")}
    return env | {
        "PATH": f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        "PYTHONPATH": str(REPO),
        BROKER_ENV: broker_url,
        "HF_HUB_OFFLINE": "1",
    }


def start_worker(name: str, queue: str, env: dict[str, str], log: Path) -> subprocess.Popen:
    """A `dagster-celery worker start` (which runs `celery worker`) in a session of its own, one step
    at a time, ended by `timeout` after WORKER_LIFETIME_S at the latest."""
    command = [
        *("timeout", "-k", "5", str(WORKER_LIFETIME_S)),
        str(BIN / "dagster-celery"),
        *("worker", "start", "-A", "dagster_celery.app", "-y", str(REPO / "deploy" / "celery.yaml")),
        *("-q", queue, "-n", name, "-i", "assets.definitions", "--"),  # the platform imported once, at start
        *("--pool=solo", "--without-gossip", "--without-mingle"),  # one step at a time, in the worker's process
    ]
    with log.open("wb") as out:
        return subprocess.Popen(
            command, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def stop(workers: list[subprocess.Popen]) -> None:
    """Each worker's whole session (`timeout`, the CLI, celery), all at once: TERM (celery's warm
    shutdown, a few seconds), then KILL what is left after STOP_S."""

    def alive(worker: subprocess.Popen) -> bool:
        worker.poll()  # reaped: a zombie would still count as the group's
        try:
            os.killpg(worker.pid, 0)
        except ProcessLookupError:
            return False
        return True

    for sig in (signal.SIGTERM, signal.SIGKILL):
        left = [worker for worker in workers if alive(worker)]
        for worker in left:
            with contextlib.suppress(ProcessLookupError):  # it may have just ended
                os.killpg(worker.pid, sig)
        deadline = time.monotonic() + STOP_S
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = [worker for worker in left if alive(worker)]
    for worker in workers:
        worker.wait(STOP_S)


def wait_ready(workers: dict[str, subprocess.Popen], logs: dict[str, Path]) -> None:
    deadline = time.monotonic() + READY_S
    waiting = set(workers)
    while waiting and time.monotonic() < deadline:
        for name in sorted(waiting):
            text = logs[name].read_text(errors="replace")
            if " ready." in text:
                waiting.discard(name)
            elif workers[name].poll() is not None:
                pytest.fail(f"worker {name} exited ({workers[name].returncode}):\n{text[-3000:]}")
        time.sleep(0.2)
    if waiting:
        pytest.fail(f"workers {sorted(waiting)} not ready in {READY_S} s:\n{logs[min(waiting)].read_text()[-3000:]}")


@pytest.fixture
def workers(tmp_path, broker, dagster_home, memory_home):
    """Two workers on the test's queue, each its own process and Celery hostname."""
    url, queue = broker
    env = child_env(url)
    token = uuid.uuid4().hex[:6]
    names = [f"w1-{token}", f"w2-{token}"]
    logs = {name: tmp_path / f"{name}.log" for name in names}
    started: dict[str, subprocess.Popen] = {}
    try:
        for name in names:
            started[name] = start_worker(name, queue, env, logs[name])
        wait_ready(started, logs)
        yield names, logs
    finally:
        stop(list(started.values()))


def celery_hostnames(instance: dg.DagsterInstance, run_id: str) -> set[str]:
    """The Celery workers that executed the run's steps, as the workers recorded in the event log."""
    found = set()
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        if event is not None and event.is_engine_event and event.engine_event_data:
            worker = event.engine_event_data.metadata.get("Celery worker")
            if worker is not None:
                found.add(worker.value)
    return found


def step_span(instance: dg.DagsterInstance, run_id: str) -> tuple[float, float]:
    """When the run's step started and succeeded (the worker's clock)."""
    at = {
        entry.dagster_event.event_type: entry.timestamp
        for entry in instance.all_logs(run_id)
        if entry.dagster_event is not None and entry.dagster_event.is_step_event
    }
    return at[dg.DagsterEventType.STEP_START], at[dg.DagsterEventType.STEP_SUCCESS]


def test_tenant_partitions_run_on_two_celery_workers_with_postgres_storage(
    broker, pg_schema, dagster_home, memory_home, workers
):
    import psycopg

    url, queue = broker
    names, logs = workers
    started = time.monotonic()
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        assert type(instance.run_storage).__name__ == "PostgresRunStorage"
        instance.add_dynamic_partitions("tenants", list(TENANTS))

    # A backfill over the tenants: one run per tenant partition, all at once, each orchestrated by
    # its own process (tests/celery_run.py: dg.execute_job on the Postgres instance).
    processes = {
        tenant: subprocess.Popen(
            [*("timeout", "-k", "5", str(RUN_S)), sys.executable, "-m", "tests.celery_run", JOB, tenant, url, queue],
            cwd=REPO,
            env=child_env(url),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tenant in TENANTS
    }
    launched, outputs = {}, {}
    try:
        for tenant, process in processes.items():
            out, err = process.communicate(timeout=RUN_S + 10)
            outputs[tenant] = f"{out}\n{err[-3000:]}"
            lines = out.strip().splitlines()
            done = json.loads(lines[-1]) if lines else {"run_id": None, "success": False}
            launched[tenant] = (done["run_id"], done["success"])
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
                process.communicate()
    elapsed = time.monotonic() - started

    worker_logs = "\n".join(f"--- {n}\n{logs[n].read_text(errors='replace')[-2000:]}" for n in names)
    assert all(ok for _, ok in launched.values()), f"{launched}\n{outputs}\n{worker_logs}"
    run_ids = {run_id for run_id, _ in launched.values()}

    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        # Through the instance: each run succeeded, on its tenant partition.
        runs = {run.run_id: run for run in instance.get_runs(filters=dg.RunsFilter(run_ids=list(run_ids)))}
        assert set(runs) == run_ids
        assert {run.status for run in runs.values()} == {dg.DagsterRunStatus.SUCCESS}
        assert {runs[run_id].tags["dagster/partition"] for run_id, _ in launched.values()} == set(TENANTS)
        # Every step ran on a worker, and the work spread over both.
        by_run = {run_id: celery_hostnames(instance, run_id) for run_id in run_ids}
        hosts = set().union(*by_run.values())
        assert all(len(found) == 1 for found in by_run.values()), by_run
        assert {host.partition("@")[0] for host in hosts} == set(names), f"{by_run}\n{worker_logs}"
        spans = sorted(step_span(instance, run_id) for run_id in run_ids)
        # What each tenant's step found: its own facts, and nothing of the others'.
        for tenant, (run_id, _) in launched.items():
            [materialization] = [
                e.asset_materialization
                for e in instance.all_logs(run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION)
            ]
            assert materialization.partition == tenant
            facts = sum(v.value for k, v in materialization.metadata.items() if k.startswith("facts_"))
            assert facts == FACTS[tenant]
            assert (memory_home / "reports" / "tenants" / f"{tenant}.png").exists()

    # Straight from Postgres: the runs table in the test's schema holds the runs.
    pg_url, schema = pg_schema
    with psycopg.connect(pg_url, connect_timeout=3) as connection:
        query = f'SELECT run_id, status FROM "{schema}".runs WHERE run_id = ANY(%s)'
        rows = connection.execute(query, [list(run_ids)]).fetchall()
    assert {run_id: status for run_id, status in rows} == dict.fromkeys(run_ids, "SUCCESS")
    side_by_side = spans[1][0] < spans[0][1]  # the second step started before the first one ended
    print(
        f"\n{len(run_ids)} tenant runs on {sorted(hosts)} in {elapsed:.1f} s; steps side by side: {side_by_side}; "
        f"Postgres runs table: {sorted(rows)}"
    )
