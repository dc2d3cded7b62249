"""The in-process peer vectors: a batch put is the same as one put per vector; a batch's vectors
are gathered from its mappings, the newest winning."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.identity import Identity, Scope
from memory_core.vectors import VectorRows, gather_rows
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


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.integers(0, 20), max_size=12, unique=True), min_size=1, max_size=5), st.randoms())
def test_gathered_rows_are_the_newest_mapping_s_vector(maps, rnd):
    """A batch's vectors travel as rows of one matrix (VectorRows) or as plain dicts; gathering
    many ids answers, for each, the vector of the latest mapping that holds it."""
    rng = np.random.default_rng(rnd.randrange(1000))
    mappings, expected = [], {}
    for n, ids in enumerate(maps):
        names = [f"f{i}" for i in ids]
        matrix = rng.normal(size=(len(names), 3)).astype(np.float32)
        mappings.append(VectorRows(names, matrix) if n % 2 == 0 else dict(zip(names, matrix)))
        expected.update(zip(names, matrix))
    wanted = [f for f in expected if rnd.random() < 0.7]
    rnd.shuffle(wanted)
    gathered = gather_rows(mappings, wanted, 3)
    assert gathered.shape == (len(wanted), 3)
    for row, fact_id in zip(gathered, wanted):
        assert np.array_equal(row, expected[fact_id])
    if expected:
        with pytest.raises(KeyError):
            gather_rows(mappings, [*wanted, "never-written"], 3)
