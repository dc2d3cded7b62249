"""The placement group, materialized against a temporary memory home."""

import dagster as dg

from assets.placement import placed_facts, placement_as_constructed, placement_corpus
from assets.resources import MemoryHomeResource
from memory_core import Identity, Memory

SMALL = {"ops": {"placement_corpus": {"config": {"seed": 5, "items": 60, "tenant": "p-demo"}}}}


def _materialize(home):
    return dg.materialize(
        [placement_corpus, placed_facts, placement_as_constructed],
        resources={"memory_home": MemoryHomeResource(home=str(home))},
        run_config=SMALL,
    )


def test_placement_materializes_as_constructed_and_is_not_written_twice(tmp_path):
    home = tmp_path / "home"
    result = _materialize(home)
    assert result.success
    [check] = result.get_asset_check_evaluations()
    assert check.check_name == "placement_as_constructed" and check.passed
    md = result.asset_materializations_for_node("placed_facts")[0].metadata
    assert md["written"].value == 60 and md["tenant_scope"].value > 0 and md["user_scope"].value > 0
    assert md["mismatches"].value == 0 and md["halves_apart"].value == 0
    with Memory.open(home, read_only=True) as memory:
        versions = memory.store.inspection.table_counts()["memory_versions"]
        colleague = memory.for_run(Identity(tenant="p-demo", user="zed"))
        shared = colleague.list(scope="tenant")
        assert shared and all(f.key.split(":")[0] in ("service", "database") for f in shared)
    assert _materialize(home).success
    with Memory.open(home, read_only=True) as memory:
        assert memory.store.inspection.table_counts()["memory_versions"] == versions


def test_the_placement_check_fails_when_a_fact_lands_elsewhere():
    passed = placement_as_constructed(placed_facts={"mismatches": [], "halves_apart": []})
    failed = placement_as_constructed(
        placed_facts={
            "mismatches": [{"key": "k", "expected": ["tenant", "x"], "got": ["user", "y"]}],
            "halves_apart": ["k2"],
        }
    )
    assert passed.passed and not failed.passed and failed.metadata["halves_apart"].value == 1


def test_the_guides_become_searchable_documents_in_the_graph(tmp_path):
    from assets.documents import guide_documents

    home = tmp_path / "home"
    result = dg.materialize([guide_documents], resources={"memory_home": MemoryHomeResource(home=str(home))})
    md = result.asset_materializations_for_node("guide_documents")[0].metadata
    assert result.success and md["documents"].value >= 5 and md["chunks_in_graph_for_first"].value >= 1
    with Memory.open(home, embedder="hashing") as memory:
        tool = memory.for_run(Identity(tenant="docs-demo", user="reader"))
        assert any(d.key == "graph" for d in tool.doc_list(scope="tenant"))
        hits = tool.search("single-valued relation one value current", scope="tenant", sources=["document"]).hits
        assert hits and hits[0].key.startswith("doc:")
    empty = tmp_path / "empty"
    empty.mkdir()
    skipped = dg.materialize(
        [guide_documents],
        resources={"memory_home": MemoryHomeResource(home=str(home))},
        run_config={"ops": {"guide_documents": {"config": {"folder": str(empty)}}}},
    )
    assert skipped.asset_materializations_for_node("guide_documents")[0].metadata["skipped"].value is True
