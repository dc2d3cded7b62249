"""Nothing acknowledged is lost: a service killed (SIGKILL) in the middle of a stream of writes
comes back with every write it answered; a service told to stop (SIGTERM) answers the requests
it is running first, writes the index's queue, and exits 0."""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

from memory_core import Identity, Memory
from memory_core.client import RemoteMemory
from memory_core.errors import MemcoreError
from tests.service.process import service


def _keys(home, n: int) -> list[str]:
    with Memory.open(home, embedder="hashing") as memory:
        return [memory.keys.create(tenant="acme", user=f"writer{i}", agent="a")[0] for i in range(n)]


def test_a_killed_service_loses_no_acknowledged_write(tmp_path):
    home = tmp_path / "home"
    tokens = _keys(home, 4)
    acknowledged: dict[int, dict[str, str]] = {i: {} for i in range(len(tokens))}
    stop = threading.Event()

    def write(i: int, url: str) -> None:
        with RemoteMemory(url, tokens[i], timeout=10) as remote:
            tool = remote.tool()
            n = 0
            while not stop.is_set():
                key, value = f"k{n % 40}", f"w{i}-{n}"
                try:
                    tool.set(key, value)
                except MemcoreError:  # the service went away mid-request: not acknowledged
                    return
                acknowledged[i][key] = value  # the newest acknowledged value of each key
                n += 1

    with service(home) as running:
        writers = [threading.Thread(target=write, args=(i, running.url)) for i in range(len(tokens))]
        for w in writers:
            w.start()
        deadline = time.monotonic() + 30
        while sum(map(len, acknowledged.values())) < 120 and time.monotonic() < deadline:
            time.sleep(0.05)
        running.signal(signal.SIGKILL)  # no drain, no flush: whatever DuckDB committed is all there is
        assert running.wait() == -signal.SIGKILL
        stop.set()
        for w in writers:
            w.join(timeout=30)
    written = sum(map(len, acknowledged.values()))
    assert written >= 120

    with service(home) as restarted:
        for i, token in enumerate(tokens):
            with RemoteMemory(restarted.url, token) as remote:
                tool = remote.tool()
                for key, value in acknowledged[i].items():
                    found = tool.get(key)
                    assert found is not None and found.value == value, (i, key, value)
                # The index caught up with the store on the way back: recall finds them too.
                some = next(iter(acknowledged[i].values()))
                assert some in [h.value for h in tool.recall(some, k=50).hits]


def test_sigterm_drains_the_requests_in_flight_and_exits_zero(tmp_path):
    home = tmp_path / "home"
    tokens = _keys(home, 6)
    entries = [{"key": f"bulk{n}", "value": f"entry {n}"} for n in range(400)]
    with Memory.open(tmp_path / "in-process", embedder="hashing") as memory:  # what each bulk write answers
        tool = memory.for_run(Identity(tenant="acme", user="someone"))
        expected, live = len(tool.bulk_set(entries).written), len(tool.list())
    with service(home) as running:
        started = threading.Barrier(len(tokens) + 1)

        answered_at: list[float] = []

        def bulk(token: str) -> int:
            with RemoteMemory(running.url, token, timeout=60) as remote:
                tool = remote.tool()
                started.wait()
                count = len(tool.bulk_set(entries).written)
                answered_at.append(time.monotonic())
                return count

        with ThreadPoolExecutor(len(tokens)) as pool:
            futures = [pool.submit(bulk, t) for t in tokens]
            started.wait()
            time.sleep(0.2)  # the bulk writes are on the wire, some running
            signalled_at = time.monotonic()
            running.signal(signal.SIGTERM)
            written = [f.result(timeout=60) for f in futures]  # every one answered, none cut off
        assert running.wait() == 0
    assert max(answered_at) > signalled_at  # some were still running when the signal came
    assert written == [expected] * len(tokens)
    with Memory.open(home, embedder="hashing") as memory:
        for token in tokens:
            key = memory.keys.authenticate(token)
            assert len(memory.for_run(key.identity()).list()) == live
        assert memory.index_queued() == 0
