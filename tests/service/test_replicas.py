"""Two memory services over ONE PostgreSQL authority (DESIGN.md, "Scale-out path", shape 3): real
``serve`` processes, each with its own home folder (its Lance index) and the same signing key,
16 clients (8 per replica) writing and reading the same keys at once.

Afterwards: every acknowledged write is in its key's history through both replicas; each key's
history is one total order (versions 1..n, no gap, at most one live head, each fact closed at
most once), the same through both; the audit chain verifies; each replica's index serves every
key's newest state (how long after the writes ended is measured and printed, with and without a
search asking) and agrees with the authority fact by fact.
A replica killed with SIGKILL mid-run loses nothing it acknowledged, and neither does the other:
the survivor and the restarted one both read every acknowledged write. And a fact restated
through one replica after the other restated it stays findable through both.
"""

from __future__ import annotations

import signal
import threading
import time
from collections import Counter, defaultdict
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

from memory_core import Identity, Memory
from memory_core.client import RemoteMemory
from memory_core.model import LIVE_STATUSES
from tests.pg import fresh_store_url
from tests.service.replicas import CLIENTS_PER_REPLICA, TENANT, USER, Ack, Clients, Cluster, histories

CONVERGE_TIMEOUT_S = 60.0
# What ``check_histories`` finds, by kind (each problem's text names its kind).
KINDS = (
    "disagree",
    "not 1..n",
    "live heads",
    "closed more than once",
    "not in its history",
    "reads back",
    "out of order",
)
PASSIVE_WAIT_S = 5.0  # how long the index is watched without a search (the upkeep's own following)


@pytest.fixture
def store_url() -> Iterator[str]:
    yield from fresh_store_url()


def check_histories(cluster: Cluster, replicas: list[int], acks: list[Ack]) -> dict[str, list]:
    """(a) every acknowledged row is in its key's history, (b) one total order per key, the same
    through every replica. Every problem is collected before failing, so one run shows them all.
    Returns the histories (through the first replica)."""
    keys = sorted({a.key for a in acks})
    seen = {r: histories(cluster.services[r].url, cluster.tokens[0], keys) for r in replicas}
    first = seen[replicas[0]]
    problems: list[str] = []
    for r in replicas[1:]:
        for key in keys:
            if [(x.id, x.version, x.value_json) for x in seen[r][key]] != [
                (x.id, x.version, x.value_json) for x in first[key]
            ]:
                problems.append(f"{key}: replicas {replicas[0]} and {r} disagree")
    for key, rows in first.items():
        if [x.version for x in rows] != list(range(1, len(rows) + 1)):
            problems.append(f"{key}: versions {[x.version for x in rows]} are not 1..n")
        if len(live := [s for s in newest_facts(rows) if s.status.value in LIVE_STATUSES]) > 1:
            problems.append(f"{key}: {len(live)} live heads")
        closings = defaultdict(list)
        for x in rows:
            if x.op.value == "supersede":
                closings[x.fact_id].append(f"v{x.version} by {x.changed_by}")
        # A fact is closed once: a second supersede row means a write decided on a stale state.
        problems += [
            f"{key}: fact {f[:8]} closed more than once ({', '.join(c)})" for f, c in closings.items() if len(c) > 1
        ]
    by_id = {x.id: x for rows in first.values() for x in rows}
    for a in acks:
        row = by_id.get(a.row_id)
        if row is None:
            problems.append(f"acknowledged {a.key} v{a.version} (client {a.client}) is not in its history")
        elif (row.key, row.version, row.value_json) != (a.key, a.version, a.value_json):
            problems.append(f"acknowledged {a} reads back as v{row.version} {row.value_json}")
    # Each client's successive writes of one key were numbered in the order it made them.
    order: dict[tuple[int, str], list[int]] = defaultdict(list)
    for a in acks:
        order[(a.client, a.key)].append(a.version)
    for (client, key), versions in order.items():
        if versions != sorted(versions) or len(set(versions)) != len(versions):
            problems.append(f"client {client}, {key}: acknowledged versions {versions} out of order")
    kinds = Counter(next((k for k in KINDS if k in p), "other") for p in problems)
    assert not problems, f"{len(problems)} problems in {len(keys)} keys {dict(kinds)}: " + "; ".join(problems[:12])
    return first


def newest_facts(rows: list) -> list:
    """The state (newest row) of each fact among a key's rows (oldest first)."""
    latest: dict[str, Any] = {}
    for x in rows:
        latest[x.fact_id] = x
    return list(latest.values())


def check_audit(cluster: Cluster, replica: int) -> None:
    with cluster.checker() as memory:
        report = memory.verify_audit()
        assert report.ok, report
    with RemoteMemory(cluster.services[replica].url, cluster.admin) as remote:
        assert remote.verify_audit().ok


def authority_now(cluster: Cluster, keys: list[str]) -> tuple[dict[str, Any], int]:
    """Read in-process from the authority: each key's served state (the newest row of its one
    live fact; None: nothing live), and how many facts the index should hold."""
    with Memory.open(cluster.root / "checker", embedder="hashing", read_only=True, **cluster.open_options()) as memory:
        tool = memory.for_run(Identity(tenant=TENANT, user=USER))
        newest = {}
        for key in keys:
            live = [x for x in newest_facts(tool.history(key)) if x.status.value in LIVE_STATUSES]
            newest[key] = max(live, key=lambda x: x.version) if live else None
        indexable = sum(map(memory.indexable, memory.store.versions.latest_states()))
    return newest, indexable


def converge(cluster: Cluster, replicas: list[int], newest: dict[str, Any], since: float) -> dict[int, dict[str, Any]]:
    """Poll every replica at once with ``recall`` of every key's newest value until each finds
    that very version and no older one of the key. Per replica: ``lag_s`` from ``since`` until it
    did, ``passes`` over the keys it took (1: everything was served at the first read), and
    ``stale``, the answers that served an older version of a key meanwhile (a search catches up
    with the other replicas' writes before it reads, so none is expected)."""
    found: dict[int, dict[str, Any]] = {}

    def poll(r: int) -> None:
        try:
            polled(r)
        except Exception as exc:  # noqa: BLE001 - named in the failure below
            found[r] = {"error": f"{type(exc).__name__}: {exc}", "not_served": ["?"], "stale": 0}

    def polled(r: int) -> None:
        with RemoteMemory(cluster.services[r].url, cluster.tokens[0]) as remote:
            tool = remote.tool()
            waiting = {k: s for k, s in newest.items() if s is not None}
            deadline, passes, stale = time.monotonic() + CONVERGE_TIMEOUT_S, 0, 0
            while waiting and time.monotonic() < deadline:
                passes += 1
                for key, state in list(waiting.items()):
                    hits = [h.version_id for h in tool.recall(state.value, k=10).hits if h.key == key]
                    if hits == [state.id]:
                        del waiting[key]
                    elif hits:
                        stale += 1
            found[r] = {"lag_s": round(time.monotonic() - since, 2), "passes": passes, "stale": stale}
            found[r]["not_served"] = sorted(waiting)

    pollers = [threading.Thread(target=poll, args=(r,)) for r in replicas]
    for t in pollers:
        t.start()
    for t in pollers:
        t.join()
    return found


def check_indexes(cluster: Cluster, replicas: list[int]) -> None:
    """Each stopped replica's index, opened in-process, agrees with the authority fact by fact."""
    for r in replicas:
        home = cluster.root / f"replica{r}"
        with Memory.open(home, embedder="hashing", **cluster.open_options()) as memory:
            found = memory.projector.consistency()
            assert not (found.missing or found.stale or found.extra or found.duplicated), (r, found)


def background(
    cluster: Cluster, replicas: list[int], indexable: int, since: float, wait_s: float
) -> dict[int, dict[str, Any]]:
    """Each replica's index as its own upkeep leaves it, no search asked: polled through the
    index status until the replica has replayed every write the other one made (``behind`` 0)
    and written its index queue (``queued`` 0), for ``wait_s`` at most. Per replica: the seconds
    from ``since`` until it did (None: not in time) and the last status read. Whether the index
    then holds exactly the authority's facts is ``check_indexes``'s."""
    out: dict[int, dict[str, Any]] = {}
    deadline = time.monotonic() + wait_s
    while len(out) < len(replicas):
        for r in (r for r in replicas if r not in out):
            status = index_status(cluster, r)
            if status["behind"] == 0 and not status["queued"]:
                out[r] = {"lag_s": round(time.monotonic() - since, 2), **status}
            elif time.monotonic() > deadline:
                out[r] = {"lag_s": None, **status}
        time.sleep(0.1)
    return out


def index_status(cluster: Cluster, replica: int) -> dict[str, Any]:
    with RemoteMemory(cluster.services[replica].url, cluster.admin) as remote:
        status = remote.index_status()
    return {k: status.get(k) for k in ("rows", "unsettled_rows", "queued", "behind")}


@contextmanager
def writing(tmp_path: Path, url: str) -> Iterator[tuple[Cluster, Clients]]:
    """Two replicas started and the clients writing through them; all stopped on the way out."""
    cluster = Cluster(url, tmp_path)
    cluster.create_keys(CLIENTS_PER_REPLICA * 2)
    clients = None
    try:
        cluster.start(0)
        cluster.start(1)
        clients = Clients(cluster)
        clients.start()
        yield cluster, clients
    finally:
        if clients is not None:
            clients.stop.set()
        cluster.stop_all()


def run_replicas(tmp_path: Path, url: str, duration_s: float) -> None:
    with writing(tmp_path, url) as (cluster, clients):
        time.sleep(duration_s)
        clients.join()
        ended = time.monotonic()
        assert not clients.failures, clients.failures[:5]
        newest, indexable = authority_now(cluster, sorted({a.key for a in clients.acks}))
        unasked = background(cluster, [0, 1], indexable, ended, PASSIVE_WAIT_S)
        served = converge(cluster, [0, 1], newest, ended)
        per_replica = {r: sum(a.replica == r for a in clients.acks) for r in (0, 1)}
        print(
            f"\nreplicas: {len(clients.acks)} acknowledged rows in {duration_s:.0f} s "
            f"({per_replica[0]} via replica 0, {per_replica[1]} via replica 1), {len(newest)} keys, "
            f"{indexable} indexable facts in the authority. Unasked (index status only, no search, "
            f"{PASSIVE_WAIT_S:g} s at most): {unasked}. Asked (recall of every key's newest value, s from "
            f"the end of the writes): {served}"
        )
        assert all(not s["not_served"] and not s["stale"] for s in served.values()), served
        check_histories(cluster, [0, 1], clients.acks)
        check_audit(cluster, 0)
        assert min(per_replica.values()) > 0
    for r in (0, 1):
        assert cluster.services[r].proc.returncode == 0, cluster.services[r].errors[-3000:]
    check_indexes(cluster, [0, 1])


def run_with_a_kill(tmp_path: Path, url: str, duration_s: float) -> None:
    with writing(tmp_path, url) as (cluster, clients):
        time.sleep(duration_s / 2)
        clients.killed.add(1)
        cluster.services[1].signal(signal.SIGKILL)  # no drain: what the authority committed is all
        assert cluster.services[1].wait() == -signal.SIGKILL
        killed_at = time.monotonic()
        time.sleep(duration_s / 2)
        deadline = time.monotonic() + 30  # a loaded host: let the survivor answer a write or two
        while not any(a.replica == 0 and a.at > killed_at + 0.5 for a in clients.acks) and time.monotonic() < deadline:
            time.sleep(0.1)
        clients.join()
        assert not clients.failures, clients.failures[:5]
        # The killed replica's connections (and any lock they held) died with it: the survivor
        # went on writing.
        assert any(a.replica == 0 and a.at > killed_at + 0.5 for a in clients.acks), "no write after the kill"
        assert any(a.replica == 1 for a in clients.acks)
        cluster.services[1].stop()  # already dead: its pipes are closed
        restarted = time.monotonic()
        cluster.start(1)  # the same home folder: it catches up with the authority
        ready = time.monotonic()
        newest, _ = authority_now(cluster, sorted({a.key for a in clients.acks}))
        served = converge(cluster, [0, 1], newest, ready)
        print(
            f"\nkill: {len(clients.acks)} acknowledged rows ({sum(a.replica == 1 for a in clients.acks)} via the "
            f"killed replica); restarted in {ready - restarted:.1f} s; every key's newest state served after "
            f"(s from the restart's announcement, recall passes over the keys): {served}"
        )
        assert all(not s["not_served"] and not s["stale"] for s in served.values()), served
        check_histories(cluster, [0, 1], clients.acks)  # through the survivor and the restarted one
        check_audit(cluster, 1)
    check_indexes(cluster, [0, 1])


def test_two_replicas_share_one_authority(tmp_path, store_url):
    run_replicas(tmp_path, store_url, duration_s=8)


def test_a_killed_replica_loses_no_acknowledged_write(tmp_path, store_url):
    run_with_a_kill(tmp_path, store_url, duration_s=8)


@pytest.mark.slow
def test_two_replicas_for_a_minute(tmp_path, store_url):
    run_replicas(tmp_path, store_url, duration_s=60)


@pytest.mark.slow
def test_a_replica_killed_in_a_minute_of_writes(tmp_path, store_url):
    run_with_a_kill(tmp_path, store_url, duration_s=60)


def test_a_fact_restated_through_each_replica_stays_findable(tmp_path, store_url):
    """Two replicas (in-process here) restate one fact in turn: each new row of the fact replaces
    the one the other replica's index holds, and a search through either still finds it."""
    options = {"store": store_url, "key_dir": str(tmp_path / "keys"), "embedder": "hashing"}
    with Memory.open(tmp_path / "a", **options) as a, Memory.open(tmp_path / "b", **options) as b:
        ana = Identity(tenant=TENANT, user="ana")
        here, there = a.for_run(ana), b.for_run(ana)
        value = "lives in Lisbon near the river"
        here.set("city", value)
        assert [h.key for h in there.recall("Lisbon river", k=5).hits] == ["city"]  # b indexes it
        assert there.set("city", value).verdict == "restated"  # b's own row of the fact
        assert [h.key for h in there.recall("Lisbon river", k=5).hits] == ["city"]  # in b's index
        assert here.set("city", value).verdict == "restated"  # a newer row, written elsewhere
        for tool in (here, there):
            hits = tool.recall("Lisbon river", k=5).hits
            assert [(h.key, h.version_id) for h in hits] == [("city", here.get("city").id)]
        b.flush()
        found = b.projector.consistency()
        assert not (found.missing or found.stale or found.duplicated), found
