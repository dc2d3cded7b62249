"""Writers of one key racing on one home (real clock, threads): each decides as of the moment it
holds the lock, so no write closes a fact the write ahead of it already closed. A request
stamped before it waited for the lock once saw the just-superseded fact as live at its older
instant and closed it again (found by the replicas test, tests/service/test_replicas.py)."""

from __future__ import annotations

import threading
import time
from collections import Counter

from memory_core import Identity, Memory


def test_racing_writers_close_each_fact_once(tmp_path):
    with Memory.open(tmp_path / "home") as memory:
        tools = [memory.for_run(Identity(tenant="acme", user="ana", agent=f"a{i}")) for i in range(6)]
        stop = time.monotonic() + 2.0

        def write(i: int) -> None:
            n = 0
            while time.monotonic() < stop:
                tools[i].set(f"k{n % 2}", f"writer {i} value {n}")
                n += 1

        threads = [threading.Thread(target=write, args=(i,)) for i in range(len(tools))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for key in ("k0", "k1"):
            rows = tools[0].history(key)
            closings = Counter(r.fact_id for r in rows if r.op.value == "supersede")
            assert len(rows) > 20
            assert [r.version for r in rows] == list(range(1, len(rows) + 1))
            assert max(closings.values()) == 1, key
            assert sum(1 for r in rows if r.status.value == "active" and r.invalid_at is None) >= 1
