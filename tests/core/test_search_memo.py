"""What a kept search holds (for its later pages and its trace)."""

import numpy as np

from memory_core import Identity, Memory


def test_a_kept_search_holds_no_stored_vectors_and_still_pages(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="acme", user="ana"))
        for i in range(30):
            tool.set(f"note-{i:02d}", f"apples from the orchard, basket {i}", kind="note")
        first = tool.recall("apples orchard basket", k=5)
        kept = memory.session.searches.lookup(first.trace_id, clock.now())
        rows = [row for leg in kept.searched.legs.values() if isinstance(leg, list) for row in leg]
        assert rows and not any(isinstance(row.get("vector"), np.ndarray) or "vector" in row for row in rows)
        second = tool.recall("apples orchard basket", k=5, cursor=first.next_cursor)
        assert second.hits and not {h.key for h in second.hits} & {h.key for h in first.hits}
        assert tool.search_trace(first.trace_id).fused
