"""Service replicas over one PostgreSQL authority, for ``test_replicas``: the cluster (the
authority, the shared signing key, each replica's home and service) and the clients that write
and read through it, recording every acknowledged write."""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core import Memory
from memory_core.client import RemoteMemory
from memory_core.errors import MemcoreError
from tests.service.process import ServiceProcess

TENANT, USER = "acme", "shared"
SHARED_KEYS = 20  # every client writes these
OWN_KEYS = 3  # and a few of its own
CLIENTS_PER_REPLICA = 8


def word(rng: random.Random) -> str:
    return "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(4))


@dataclass
class Cluster:
    """The authority's URL, the shared key folder, the replicas' homes and their services."""

    url: str
    root: Path
    tokens: list[str] = field(default_factory=list)
    admin: str = ""
    services: dict[int, ServiceProcess] = field(default_factory=dict)

    @property
    def key_dir(self) -> Path:
        return self.root / "keys"

    def open_options(self) -> dict[str, Any]:
        return {"store": self.url, "key_dir": str(self.key_dir)}

    def create_keys(self, clients: int) -> None:
        # Keys live in the authority: made once here, every replica accepts them.
        with Memory.open(self.root / "keys-home", embedder="hashing", **self.open_options()) as memory:
            self.tokens = [memory.keys.create(tenant=TENANT, user=USER, agent=f"c{i}")[0] for i in range(clients)]
            self.admin = memory.keys.create(tenant=TENANT, user="ops", admin=True)[0]

    def start(self, replica: int) -> ServiceProcess:
        self.services[replica] = ServiceProcess(self.root / f"replica{replica}", open_options=self.open_options())
        return self.services[replica]

    def stop_all(self) -> None:
        for running in self.services.values():
            running.stop()

    def checker(self) -> Memory:
        """The authority read in-process, through a home of its own (no index)."""
        return Memory.open(self.root / "checker", read_only=True, **self.open_options())


@dataclass(frozen=True)
class Ack:
    client: int
    replica: int
    key: str
    fact_id: str
    row_id: str
    version: int
    value_json: str
    at: float


class Clients:
    """``CLIENTS_PER_REPLICA`` threads per replica: each writes (70% of its ops: mostly the shared
    keys, some its own; one write in seven restates a shared key's current value), reads (get, and
    recall now and then), and after writing one of its own keys reads it back through the OTHER
    replica (a get reads the authority: read-your-writes holds across replicas). Every
    acknowledged write's rows are recorded."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.acks: list[Ack] = []
        self.failures: list[str] = []
        self.stop = threading.Event()
        self.killed: set[int] = set()  # replicas killed on purpose: their errors are expected
        self.threads = [
            threading.Thread(target=self._run, args=(c, c % 2), name=f"client{c}")
            for c in range(CLIENTS_PER_REPLICA * 2)
        ]

    def start(self) -> None:
        for t in self.threads:
            t.start()

    def join(self) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=120)
        assert not any(t.is_alive() for t in self.threads), "a client did not finish"

    def _run(self, c: int, replica: int) -> None:
        rng = random.Random(c)
        urls = {r: s.url for r, s in self.cluster.services.items()}
        token = self.cluster.tokens[c]
        with RemoteMemory(urls[replica], token, timeout=30) as here, RemoteMemory(urls[1 - replica], token) as there:
            tool, other = here.tool(), there.tool()
            while not self.stop.is_set():
                try:
                    self._one(c, replica, rng, tool, other)
                except MemcoreError as exc:
                    if replica in self.killed:
                        return  # its service is gone: what it answered before is what counts
                    if 1 - replica in self.killed:
                        continue  # a read through the killed replica
                    self.failures.append(f"client {c}: {type(exc).__name__}: {exc}")
                    return
                except Exception as exc:  # noqa: BLE001 - any other failure fails the test, named
                    self.failures.append(f"client {c}: {type(exc).__name__}: {exc}")
                    return

    def _one(self, c: int, replica: int, rng: random.Random, tool: Any, other: Any) -> None:
        roll = rng.random()
        if roll < 0.7:
            own = roll >= 0.55
            key = f"own-{c}-{rng.randrange(OWN_KEYS)}" if own else f"shared-{rng.randrange(SHARED_KEYS)}"
            value = " ".join(word(rng) for _ in range(3))
            if roll < 0.1 and (now := tool.get(key)) is not None:
                value = now.value  # a restatement: a new row of a fact another replica may have written
            done = tool.set(key, value)
            at = time.monotonic()
            for row in done.rows:
                self.acks.append(Ack(c, replica, row.key, row.fact_id, row.id, row.version, row.value_json, at))
            if own and 1 - replica not in self.killed:
                seen = other.get(key)
                if seen is None or seen.id != done.version.id:
                    self.failures.append(f"client {c}: {key} written through {replica}, the other read {seen}")
        elif roll < 0.95:
            tool.get(f"shared-{rng.randrange(SHARED_KEYS)}")
        else:
            tool.recall(word(rng), k=5)


def histories(url: str, token: str, keys: list[str]) -> dict[str, list]:
    with RemoteMemory(url, token) as remote:
        tool = remote.tool()
        return {key: tool.history(key) for key in keys}
