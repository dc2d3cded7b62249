"""Retrieval feedback on a search's hits, named by the search's trace id (what the usage fold
counts as a recall): only on its own hits, only from a run that reads its scope, only while the
search is kept. In-process and through the service."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import Identity, Memory
from memory_core.errors import InvalidInput, NotFound
from tests.conftest import T0

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

ANA = Identity(tenant="acme", user="ana", agent="helper")
BEN = Identity(tenant="acme", user="ben", agent="helper")


def ref(hit) -> str:
    return f"{hit.kind.value}:{hit.fact_id}"


def test_search_hits_take_feedback_by_trace_id_and_only_their_own(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        ana, ben = memory.for_run(ANA), memory.for_run(BEN)
        ana.set("boat-a", "the harbour ferry leaves at nine", kind="note")
        ana.set("boat-b", "the harbour ferry leaves at ten", kind="note")
        found = ana.recall("harbour ferry", k=2)
        assert ana.retrieval_feedback(found.trace_id, ref(found.hits[0]), "useful").verdict == "useful"
        with pytest.raises(InvalidInput):  # not one of its hits
            ana.retrieval_feedback(found.trace_id, "fact:" + "0" * 32, "useful")
        with pytest.raises(NotFound):  # ben's user scope is another namespace: as if no such search
            ben.retrieval_feedback(found.trace_id, ref(found.hits[0]), "useful")
        with pytest.raises(NotFound):
            ana.retrieval_feedback("f" * 32, ref(found.hits[0]), "useful")
        clock.set(T0 + timedelta(minutes=16))  # a search is kept 15 minutes
        with pytest.raises(NotFound):
            ana.retrieval_feedback(found.trace_id, ref(found.hits[0]), "useful")
        folded = memory.fold_usage()
        assert (folded["exposures"], folded["useful"], folded["facts"]) == (2, 1, 2)
