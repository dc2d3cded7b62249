"""The asset graph is the pipeline (issue 25, first slice): its edges say where every eval's data
came from, a new extractor version turns what it fed stale, and a CLI partition range backfills
the conversations in one run."""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from assets.conversations import (
    EXTRACTOR_CODE_VERSION,
    build_conversation_extraction,
    conversation_corpus,
    conversation_extraction,
)
from assets.definitions import ASSETS, defs
from assets.resources import EmbedderResource, LLMResource, MemoryHomeResource
from assets.retrieval import retrieval_index
from assets.staleness import status_of
from corpora.conversations import CONVERSATIONS, TENANT
from memory_core import Identity, Memory

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("retrieval_index", "conversation_extraction")  # what an eval measures comes through one of these

# Evals that measure something no asset produces, each with the reason.
EVAL_EXCEPTIONS = {
    "resolver_calibration": "measures the conflict judge on the labelled pairs corpus, not what the store holds",
}
# Assets with no upstream beyond the corpora, each with the reason.
ROOT_EXCEPTIONS = {
    "memory_home": "an observed source: the home every writer writes, which no asset makes",
    "embedder_model": "an observed source: the configured embedder, which no asset makes",
    "extraction_queue": "an observed source: the work agents queue in the store from outside the graph",
}


def resources(home):
    return {
        "memory_home": MemoryHomeResource(home=str(home)),
        "embedder": EmbedderResource(name="hashing"),
        "llm": LLMResource(),
    }


def _ancestors(graph, key: dg.AssetKey) -> set[str]:
    seen: set[dg.AssetKey] = set()
    todo = list(graph.get(key).parent_keys)
    while todo:
        parent = todo.pop()
        if parent not in seen:
            seen.add(parent)
            todo.extend(graph.get(parent).parent_keys)
    return {k.to_user_string() for k in seen}


def test_every_eval_descends_from_the_index_or_the_extraction_and_every_root_is_a_corpus_or_named():
    graph = defs.resolve_asset_graph()
    nodes = {k.to_user_string(): graph.get(k) for k in graph.get_all_asset_keys()}
    evals = {name for name, node in nodes.items() if node.group_name == "evals"}
    assert evals, "no eval assets found"
    orphans = {name for name in evals - EVAL_EXCEPTIONS.keys() if not set(SOURCES) & _ancestors(graph, nodes[name].key)}
    assert orphans == set()
    roots = {name for name, node in nodes.items() if not node.parent_keys}
    corpora = {name for name, node in nodes.items() if node.group_name == "corpora"}
    # A corpus may itself read an observed corpus (conversation_corpus reads locomo_dev).
    assert ROOT_EXCEPTIONS.keys() <= roots <= corpora | ROOT_EXCEPTIONS.keys()
    # Maintenance sits downstream of what it maintains: the graph is one pipeline.
    maintenance = {name for name, node in nodes.items() if node.group_name == "maintenance"}
    assert maintenance and all(nodes[name].parent_keys for name in maintenance)
    assert all(reason.strip() for reason in ROOT_EXCEPTIONS.values())
    # One pipeline: every asset reaches every other through the edges, either way.
    links = {name: set() for name in nodes}
    for name, node in nodes.items():
        for parent in node.parent_keys:
            links[name].add(parent.to_user_string())
            links[parent.to_user_string()].add(name)
    reached, todo = set(), [next(iter(nodes))]
    while todo:
        name = todo.pop()
        if name not in reached:
            reached.add(name)
            todo.extend(links[name])
    assert reached == set(nodes)
    # The partitioned assets stay out of `main` (it runs without a partition key); their job has them.
    main = {n.name for n in defs.resolve_job_def("main").nodes}
    assert {"conversation_corpus", "conversation_extraction", "tenant_report"}.isdisjoint(main)
    assert {n.name for n in defs.resolve_job_def("conversations_job").nodes} == {
        "conversation_corpus",
        "conversation_extraction",
    }


def test_the_rule_extractor_writes_what_each_conversation_expects(tmp_path):
    every = {"dagster/asset_partition_range_start": "syn-00", "dagster/asset_partition_range_end": "syn-03"}
    result = dg.materialize(
        [conversation_corpus, conversation_extraction], tags=every, resources=resources(tmp_path / "home")
    )
    assert result.success
    corpus = result.asset_materializations_for_node("conversation_corpus")
    assert sorted(m.partition for m in corpus) == [c.id for c in CONVERSATIONS]
    assert corpus[0].metadata["turns"].value == sum(c.turns for c in CONVERSATIONS)
    md = result.asset_materializations_for_node("conversation_extraction")[0].metadata
    assert md["by_conversation"].value == {c.id: len(c.expected) for c in CONVERSATIONS}
    with Memory.open(tmp_path / "home", read_only=True) as memory:
        for chat in CONVERSATIONS:
            tool = memory.for_run(Identity(tenant=TENANT, user=chat.user.lower()))
            assert {k: tool.get(k).value for k, _ in chat.expected} == dict(chat.expected), chat.id
    # Once per conversation and code version: a second run writes nothing.
    again = dg.materialize(
        [conversation_corpus, conversation_extraction], tags=every, resources=resources(tmp_path / "home")
    )
    assert again.asset_materializations_for_node("conversation_extraction")[0].metadata["facts_written"].value == 0


def _stale(instance: dg.DagsterInstance, definitions: dg.Definitions, name: str, partition: str | None = None):
    found = status_of(instance, definitions, [name], partition)[name]
    return found.status, found.causes


def test_a_new_extractor_version_turns_the_extraction_and_then_the_index_stale(tmp_path):
    instance = dg.DagsterInstance.ephemeral()
    res = resources(tmp_path / "home")
    assert dg.materialize(
        [conversation_corpus, conversation_extraction], partition_key="syn-00", instance=instance, resources=res
    ).success
    assert dg.materialize([retrieval_index], instance=instance, resources=res).success
    assert _stale(instance, defs, "conversation_extraction", "syn-00")[0] == "FRESH"
    assert _stale(instance, defs, "retrieval_index")[0] == "FRESH"

    v2 = build_conversation_extraction("v2")
    later = dg.Definitions(assets=[v2 if a.key == v2.key else a for a in ASSETS], resources=res)
    status, causes = _stale(instance, later, "conversation_extraction", "syn-00")
    assert status == "STALE" and any("code version" in c for c in causes), causes

    # Dagster 1.13: downstream turns stale only once the extraction is rematerialized at v2 (a new
    # data version), not while its code version alone is new.
    assert _stale(instance, later, "retrieval_index")[0] == "FRESH"
    again = dg.materialize([v2], partition_key="syn-00", instance=instance, resources=res)
    assert again.success  # the marker is per code version, so v2 extracts again (the same facts: none new)
    assert again.asset_materializations_for_node("conversation_extraction")[0].metadata["by_conversation"].value == {
        "syn-00": 0
    }
    assert _stale(instance, later, "conversation_extraction", "syn-00")[0] == "FRESH"
    status, causes = _stale(instance, later, "retrieval_index")
    assert status == "STALE", causes
    assert any("(conversation_extraction)" in c for c in causes), causes


def test_a_cli_partition_range_backfills_both_conversations_in_one_run(tmp_path):
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    shutil.copy(REPO / "dagster.yaml", dagster_home / "dagster.yaml")  # as the Makefile does
    env = {k: v for k, v in os.environ.items() if k not in ("MEMCORE_URL", "MEMCORE_KEY")}
    env |= {
        "DAGSTER_HOME": str(dagster_home),
        "MEMCORE_HOME": str(tmp_path / "home"),
        "MEMCORE_SHARED": str(tmp_path / "nowhere"),
        "HF_HUB_OFFLINE": "1",
    }
    command = [sys.executable, "-m", "dagster", "asset", "materialize", "-m", "assets.definitions"]
    command += ["--select", "conversation_corpus,conversation_extraction", "--partition-range", "syn-00...syn-01"]
    done = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    with Memory.open(tmp_path / "home", read_only=True) as memory:
        for chat in CONVERSATIONS[:2]:
            tool = memory.for_run(Identity(tenant=TENANT, user=chat.user.lower()))
            key, value = chat.expected[0]
            assert tool.get(key).value == value
    with dg.DagsterInstance.from_config(str(dagster_home)) as instance:
        for name in ("conversation_corpus", "conversation_extraction"):
            assert instance.get_materialized_partitions(dg.AssetKey(name)) == {"syn-00", "syn-01"}
        assert len(instance.get_runs()) == 1  # the range ran as one run (single-run backfill policy)


def test_a_locomo_partition_extracts_its_sessions_or_says_where_it_looked(tmp_path, monkeypatch):
    from corpora.locomo import LocomoNotFound, locate
    from memory_core.environment import shared_root

    one = {"dagster/asset_partition_range_start": "conv-26", "dagster/asset_partition_range_end": "conv-26"}
    monkeypatch.setenv("MEMCORE_SHARED", str(tmp_path / "nowhere"))
    absent = dg.materialize(
        [conversation_corpus, conversation_extraction], tags=one, resources=resources(tmp_path / "home")
    )
    assert absent.success
    assert (
        "LoCoMo data not found at"
        in absent.asset_materializations_for_node("conversation_corpus")[0].metadata["reason"].value
    )
    by_conversation = absent.asset_materializations_for_node("conversation_extraction")[0].metadata["by_conversation"]
    assert by_conversation.value["conv-26"].startswith("skipped: LoCoMo data not found at")

    monkeypatch.delenv("MEMCORE_SHARED")
    try:
        locate(None, shared_root())
    except LocomoNotFound as exc:
        pytest.skip(f"the rest needs the LoCoMo dev file ({exc})")
    present = dg.materialize(
        [conversation_corpus, conversation_extraction], tags=one, resources=resources(tmp_path / "home")
    )
    metadata = present.asset_materializations_for_node("conversation_extraction")[0].metadata
    written, extractor = metadata["by_conversation"], metadata["extractor"].value
    assert isinstance(written.value["conv-26"], int) and written.value["conv-26"] > 0
    with Memory.open(tmp_path / "home", read_only=True) as memory:
        tool = memory.for_run(Identity(tenant="locomo-dev", user="conv-26"))
        keys = memory.store.inspection.marker(f"conversation:conv-26:{EXTRACTOR_CODE_VERSION}:{extractor}").split(",")
        assert len(keys) == written.value["conv-26"]
        assert all(tool.get(key).provenance.session.startswith("conv-26-s") for key in keys)
