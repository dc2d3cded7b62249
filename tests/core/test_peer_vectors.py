"""The in-process peer vectors: a batch put is the same as one put per vector."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.identity import Identity, Scope
from memory_core.write.peers import PeerVectors

NS = Identity(tenant="acme", user="ana").namespace(Scope.USER)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 40), max_size=30, unique=True), max_size=6))
def test_batched_puts_equal_single_puts(batches):
    rng = np.random.default_rng(0)
    one_by_one, batched = PeerVectors(4, lambda ns: {}), PeerVectors(4, lambda ns: {})
    query = rng.normal(size=(1, 4)).astype(np.float32)
    one_by_one.nearest(NS, query, -2.0), batched.nearest(NS, query, -2.0)  # load both namespaces
    for batch in batches:
        vectors = {f"f{n}": (f"k{n}", rng.normal(size=4).astype(np.float32)) for n in batch}
        for fact_id, pair in vectors.items():
            one_by_one.put(NS, {fact_id: pair})
        batched.put(NS, vectors)
        assert one_by_one.nearest(NS, query, -2.0) == batched.nearest(NS, query, -2.0)
