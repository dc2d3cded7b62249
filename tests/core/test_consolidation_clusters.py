"""The clustering rule as properties: clusters are disjoint, bounded, built around a seed every
member links to, and never mix kinds, types or a suppression with a positive."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.consolidation import ConsolidationSettings, MergeRequest, MergeSource, RuleMerger
from memory_core.consolidation.clusters import clusters, entities, group_of
from memory_core.consolidation.plan import fallback_key
from memory_core.identity import Scope
from memory_core.model import FactVersion, Kind, Op, Provenance, Status
from memory_core.values import canonical_json, content_sha256
from tests.conftest import T0

TEXTS = [
    "Ana likes tea",
    "Ana does not like tea",
    "Maya lives in Oslo",
    "Maya moved to Oslo",
    "Bob runs marathons",
    "Bob stopped running marathons",
]


def row(i: int, text: str, memory_type: str) -> FactVersion:
    value = canonical_json(text)
    return FactVersion(
        id=f"r{i}",
        fact_id=f"f{i}",
        tenant="t",
        scope=Scope.USER,
        owner_id="ana",
        key=f"k{i}",
        value_json=value,
        content_sha256=content_sha256(value),
        kind=Kind.FACT,
        memory_type=memory_type,
        status=Status.ACTIVE,
        op=Op.SET,
        version=1,
        change_id=f"c{i}",
        observed_at=None,
        valid_at=T0,
        invalid_at=None,
        created_at=T0,
        superseded_by=None,
        reinforcement_count=0,
        provenance=Provenance("t", "user:ana", "test"),
        changed_by="user:ana",
    )


@st.composite
def homes(draw):
    n = draw(st.integers(2, 24))
    rows = [row(i, draw(st.sampled_from(TEXTS)), draw(st.sampled_from(["general", "preference"]))) for i in range(n)]
    raw = np.array(draw(st.lists(st.lists(st.floats(-1, 1), min_size=4, max_size=4), min_size=n, max_size=n)))
    raw[np.linalg.norm(raw, axis=1) < 1e-3] = [1.0, 0.0, 0.0, 0.0]
    vectors = (raw / np.linalg.norm(raw, axis=1, keepdims=True)).astype(np.float32)
    cut = draw(st.floats(0.1, 0.95))
    found = ConsolidationSettings(min_cosine=cut, strong_cosine=max(cut, 0.97), max_cluster=draw(st.integers(2, 5)))
    return rows, vectors, found


@settings(max_examples=150, deadline=None)
@given(homes())
def test_clusters_are_disjoint_bounded_seeded_and_never_mixed(home) -> None:
    rows, vectors, found = home
    seen: set[int] = set()
    for members in clusters(rows, vectors, found):
        assert 2 <= len(members) <= found.max_cluster
        assert not seen & set(members)
        seen |= set(members)
        assert len({group_of(rows[i]) for i in members}) == 1  # one kind, one type, one polarity
        seed = members[0]  # the oldest of equals: rows come in order and the seed is the first free one
        for other in members[1:]:
            cosine = float(vectors[seed] @ vectors[other])
            assert cosine >= found.min_cosine - 1e-6
            assert cosine >= found.strong_cosine - 1e-6 or entities(rows[seed]) & entities(rows[other])


def test_the_rule_merger_keeps_each_distinct_statement_once() -> None:
    sources = tuple(
        MergeSource(f"f{i}", f"k{i}", text, "2024-01-01T00:00:00Z")
        for i, text in enumerate(["Maya lives in Oslo", "maya lives in oslo.", "Maya lives in Oslo with Ana"])
    )
    answer = RuleMerger().merge(MergeRequest(sources))
    assert answer.text == "Maya lives in Oslo with Ana."
    assert answer.key == "consolidated:maya-lives-oslo"


def test_the_fallback_key_depends_on_the_merged_rows_only() -> None:
    assert fallback_key("k", ["b", "a"]) == fallback_key("k", ["a", "b"]) != fallback_key("k", ["a", "c"])
    assert len(fallback_key("x" * 500, ["a"])) <= 200


def test_a_row_is_about_its_subject_relations_and_names() -> None:
    base = row(0, "the Alps Ana visited", "general")
    found = entities(dataclasses.replace(base, subject="Ana"))
    assert {"ana", "alps"} <= found
