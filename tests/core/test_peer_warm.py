"""A namespace's peer vectors load outside the store's lock (``PeerVectors.warm``): the first
write to a large namespace does not hold every other write while its peers are embedded, a
commit landing during the load keeps its vector, a second writer waits for the load under way
instead of starting its own, and a clear (a redaction) discards a load begun before it."""

from __future__ import annotations

import threading
from typing import Any, Sequence

from memory_core import Identity, Memory
from memory_core.adapters.embedders import HashingEmbedder
from memory_core.identity import Namespace, Scope
from memory_core.write.peers import PeerVectors
from tests.core.test_threads import RUN, value

OTHER = Identity(tenant="acme", user="bea", agent="helper")
NS = Namespace("acme", Scope.USER, "ana")


class GatedEmbedder:
    """The hashing embedder, but a batch of ``at_least`` texts or more (a namespace's peers
    loading) waits for ``gate`` once it is cleared, with ``waiting`` set."""

    def __init__(self, at_least: int = 5) -> None:
        self._inner = HashingEmbedder()
        self.name, self.dim = self._inner.name, self._inner.dim
        self.at_least = at_least
        self.gate, self.waiting = threading.Event(), threading.Event()
        self.gate.set()

    def embed(self, texts: Sequence[str]) -> Any:
        if len(texts) >= self.at_least and not self.gate.is_set():
            self.waiting.set()
            self.gate.wait(timeout=30)
        return self._inner.embed(texts)


def test_a_first_write_loading_its_peers_does_not_hold_other_writes(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        memory.for_run(RUN).bulk_set([{"key": f"old{i}", "value": value("old", i)} for i in range(20)])
    embedder = GatedEmbedder()
    with Memory.open(home, clock=clock, embedder=embedder) as memory:
        embedder.gate.clear()
        first: list[Any] = []
        writer = threading.Thread(target=lambda: first.append(memory.for_run(RUN).set("copy", value("old", 3))))
        writer.start()
        assert embedder.waiting.wait(timeout=30)  # the first write is embedding its namespace's peers
        done = threading.Event()
        other = threading.Thread(target=lambda: (memory.for_run(OTHER).set("city", value("city")), done.set()))
        other.start()
        went_on = done.wait(timeout=30)
        embedder.gate.set()
        writer.join(timeout=30)
        other.join(timeout=30)
        assert went_on
        # The load was complete: the copy found the fact it copies as its peer.
        assert "old3" in {p["key"] for p in first[0].details.get("peers", [])}, first[0]


def slow_load(stored: dict[str, Any], started: threading.Event, release: threading.Event, calls: list[int]):
    def load(_ns: Namespace) -> dict[str, Any]:
        calls.append(1)
        seen = dict(stored)
        started.set()
        release.wait(timeout=30)
        return seen

    return load


def test_a_commit_during_a_warm_load_is_kept_and_a_second_warm_waits_for_it():
    lock = threading.RLock()
    embed = HashingEmbedder().embed
    stored = {"f1": ("k1", embed(["first value"])[0])}
    started, release, calls = threading.Event(), threading.Event(), []
    peers = PeerVectors(HashingEmbedder().dim, slow_load(stored, started, release, calls), locked=lambda: lock)
    warming = [threading.Thread(target=peers.warm, args=(NS,)) for _ in range(2)]
    warming[0].start()
    assert started.wait(5)
    warming[1].start()
    query = embed(["second value"])
    with lock:  # a commit while the load runs outside the lock: the row lands, then its vector
        stored["f2"] = ("k2", query[0])
        peers.put_rows(NS, ["f2"], ["k2"], query)
    release.set()
    for thread in warming:
        thread.join(timeout=30)
    assert len(calls) == 1
    with lock:
        assert {f for f, _, _ in peers.nearest(NS, query, -1.0)[0]} == {"f1", "f2"}


def test_a_clear_during_a_warm_load_discards_it():
    lock = threading.RLock()
    stored = {"f1": ("k1", HashingEmbedder().embed(["a redacted value"])[0])}
    started, release, calls = threading.Event(), threading.Event(), []
    peers = PeerVectors(HashingEmbedder().dim, slow_load(stored, started, release, calls), locked=lambda: lock)
    warming = threading.Thread(target=peers.warm, args=(NS,))
    warming.start()
    assert started.wait(5)
    stored.clear()  # the value is redacted: the store forgets it, the cache is cleared
    peers.clear()
    release.set()
    warming.join(timeout=30)
    assert peers.nearest(NS, HashingEmbedder().embed(["a redacted value"]), -1.0) == [[]]
    assert len(calls) == 2  # the discarded load, then one from the store as it is now
