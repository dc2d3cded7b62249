"""Long values: a value over the chunk size is also chunked for retrieval, fail-open.

The row stays whole; its chunks are a retrieval projection beside the index. A search that
matches a chunk answers the row once, its ``why`` naming the chunk; a revision or a delete takes
the old chunks out of retrieval; a chunker or an embedder that fails never fails the write.
"""

from __future__ import annotations

from datetime import timedelta
from functools import partial

import numpy as np
import pytest

from memory_core import Identity, Memory
from memory_core.adapters.embedders import make_embedder
from memory_core.api.memory import open_lance_index
from memory_core.errors import InvalidInput
from memory_core.retrieval.value_chunks import VALUE_CHUNK_CHARS, ValueChunker
from tests.conftest import store_snapshot

pytestmark = pytest.mark.faces

ANA = Identity(tenant="acme", user="ana", agent="helper", session="s1")
BOB = Identity(tenant="globex", user="bob", agent="helper", session="s1")
TOPICS = (
    "The garden needs watering every Tuesday and the tomatoes grow along the south fence.",
    "The car insurance renews in March with the broker on Elm street near the bakery.",
    "The lighthouse keeper named Orlando repaired the old foghorn during the winter storm.",
    "The quarterly budget review covers travel, software licences and new laptops.",
    "Grandmother's recipe for plum dumplings uses farmer cheese and cinnamon sugar.",
)
LIGHTHOUSE = 2  # the paragraph (and so the chunk) about the lighthouse


def journal(topics=TOPICS) -> str:
    """About 2,500 characters: one paragraph per topic, each a little over 400 characters."""
    return "\n\n".join(" ".join([t] * 5) for t in topics)


def chunk_of(chunker: ValueChunker, text: str, words: str) -> int:
    return next(c.index for c in chunker.chunks(text) if words in c.text)


@pytest.fixture
def small_chunks(home, clock):
    """A home whose long values are cut at 600 characters (the chunk size, set by the chunker)."""
    opener = partial(open_lance_index, chunker=ValueChunker(600))
    with Memory.open(home, clock=clock, embedder="hashing", open_index=opener) as memory:
        yield memory


def test_a_long_value_is_found_by_its_passage_once_with_the_chunk_that_matched(small_chunks):
    ana = small_chunks.for_run(ANA)
    value = journal()
    written = ana.set("notes:journal", value)
    ana.set("city", "Ana lives in Lisbon")
    assert written.verdict == "created"
    assert ana.get("notes:journal").value == value and len(ana.history("notes:journal")) == 1  # the row is whole
    hits = ana.search("who repaired the foghorn at the lighthouse", k=5).hits
    assert [h.key for h in hits].count("notes:journal") == 1  # one result per row, never one per chunk
    top = hits[0]
    assert top.key == "notes:journal" and top.value == value
    why = top.why["value_chunk"]
    expected = chunk_of(ValueChunker(600), value, "lighthouse keeper")
    assert why["chunk"] == expected and why["of"] == len(ValueChunker(600).chunks(value)) > 1
    assert "lighthouse keeper named Orlando" in why["text"] and why["text"] in value


def test_a_short_value_is_not_chunked(small_chunks):
    ana = small_chunks.for_run(ANA)
    ana.set("pet", "Ana has a cat named Miso who likes the lighthouse")
    hits = ana.search("cat named Miso").hits
    assert hits and hits[0].key == "pet" and "value_chunk" not in hits[0].why
    assert small_chunks.projector.index.chunks.count() == 0


def test_the_default_chunk_size_leaves_a_value_under_it_whole(indexed_memory):
    ana = indexed_memory.for_run(ANA)
    value = journal(TOPICS[:2])
    assert len(value) <= VALUE_CHUNK_CHARS
    ana.set("notes:short", value)
    ana.search("insurance broker")  # flushes the index
    assert indexed_memory.projector.index.chunks.count() == 0
    ana.set("notes:long", journal())
    ana.search("insurance broker")
    assert indexed_memory.projector.index.chunks.count() == len(ValueChunker().chunks(journal())) > 1


def test_a_revision_drops_the_old_chunks_and_chunks_the_new_value(small_chunks, clock):
    ana = small_chunks.for_run(ANA)
    ana.set("notes:journal", journal())
    before = clock.now()
    assert ana.search("lighthouse keeper Orlando foghorn").hits[0].why.get("value_chunk")
    clock.advance(timedelta(days=1))
    revised = journal(TOPICS[:2] + ("The sailing club meets on Saturdays at the old harbour pier.",) + TOPICS[3:])
    ana.set("notes:journal", revised)
    for hit in ana.search("lighthouse keeper Orlando foghorn", k=10).hits:  # now: the old passages answer nothing
        assert "lighthouse" not in hit.why.get("value_chunk", {}).get("text", "")
    top = ana.search("sailing club harbour pier Saturdays").hits[0]
    assert top.key == "notes:journal" and top.value == revised and "sailing club" in top.why["value_chunk"]["text"]
    # The superseded version is still found as of a time it held, by its own passages (time travel)
    old = ana.search("lighthouse keeper Orlando foghorn", as_of=before).hits[0]
    assert old.value == journal() and "lighthouse keeper" in old.why["value_chunk"]["text"]


def test_a_delete_drops_the_chunks_from_retrieval(small_chunks):
    ana = small_chunks.for_run(ANA)
    ana.set("notes:journal", journal())
    ana.set("city", "Ana lives in Lisbon")
    ana.search("foghorn")
    assert small_chunks.projector.index.chunks.count() > 0
    ana.delete("notes:journal")
    hits = ana.search("who repaired the foghorn at the lighthouse", k=10).hits
    assert "notes:journal" not in [h.key for h in hits]
    assert small_chunks.projector.index.chunks.count() == 0


def test_another_tenant_never_finds_the_chunks(small_chunks):
    small_chunks.for_run(ANA).set("notes:journal", journal())
    bob = small_chunks.for_run(BOB)
    bob.set("city", "Bob lives in Porto")
    hits = bob.search("who repaired the foghorn at the lighthouse", k=10).hits
    assert all(h.key != "notes:journal" and "value_chunk" not in h.why for h in hits)


class RaisingChunker:
    """A chunker that always fails: chunking must never fail a write."""

    max_chars = 300

    def chunks(self, text):
        raise RuntimeError("the chunker broke")


class ChunkFaultEmbedder:
    """The hashing embedder, failing whenever it is asked to embed a passage of a long value on
    its own (a text naming the foghorn but not the journal's last words)."""

    def __init__(self):
        self._inner = make_embedder("hashing")
        self.name, self.dim = self._inner.name, self._inner.dim

    def embed(self, texts):
        if any("foghorn" in t and "cinnamon sugar" not in t for t in texts):
            raise RuntimeError("the embedder broke on a chunk")
        return np.asarray(self._inner.embed(texts))


@pytest.mark.parametrize(
    "fault",
    [
        {"embedder": "hashing", "open_index": partial(open_lance_index, chunker=RaisingChunker())},
        {"embedder": ChunkFaultEmbedder(), "open_index": partial(open_lance_index, chunker=ValueChunker(600))},
    ],
    ids=["chunker", "embedder"],
)
def test_a_chunking_failure_never_fails_the_write(home, clock, fault):
    with Memory.open(home, clock=clock, **fault) as memory:
        ana = memory.for_run(ANA)
        value = journal()
        written = ana.set("notes:journal", value)
        assert written.verdict == "created"  # acknowledged
        assert ana.get("notes:journal").value == value
        hits = ana.search("garden watering Tuesday tomatoes south fence").hits  # found by its row
        assert hits and hits[0].key == "notes:journal" and "value_chunk" not in hits[0].why
        table = memory.projector.index.chunks
        assert table.failures >= 1 and table.count() == 0
        assert memory.projector.consistency().ok  # the index itself is whole: nothing to repair


def test_a_chunk_size_out_of_range_is_refused():
    for bad in (0, 10, 199, 20_001, 600.0, "600", True):
        with pytest.raises(InvalidInput) as refused:
            ValueChunker(bad)
        assert refused.value.details.get("field") == "max_chars"


def test_chunks_are_exact_slices_cut_at_a_break():
    text = journal()
    chunks = ValueChunker(600).chunks(text)
    assert "".join(c.text for c in chunks) == text  # nothing lost, nothing added
    assert all(text[c.start : c.start + len(c.text)] == c.text and len(c.text) <= 600 for c in chunks)
    assert all(c.text.endswith(("\n\n", " ")) for c in chunks[:-1])  # at a paragraph or a word break
    unbroken = "x" * 1500
    assert [len(c.text) for c in ValueChunker(600).chunks(unbroken)] == [600, 600, 300]


def test_a_failed_write_leaves_no_chunks(small_chunks):
    ana = small_chunks.for_run(ANA)
    before = store_snapshot(small_chunks)
    with pytest.raises(InvalidInput):
        ana.set("", journal())
    assert store_snapshot(small_chunks) == before
    assert small_chunks.projector.index.chunks.count() == 0


def test_a_redacted_long_value_leaves_no_chunk_behind(small_chunks, home, clock, face):
    if face != "local":
        pytest.skip("reads the home's files: the local face's home is the one whose files it checks")
    ana = small_chunks.for_run(ANA)
    secret = journal(TOPICS[:2] + ("The vault code ZEBRA-CROSSING-7731 opens the lighthouse.",) + TOPICS[3:])
    old = ana.set("notes:journal", secret).version
    clock.advance(timedelta(days=1))
    ana.set("notes:journal", journal())
    assert ana.search("vault code lighthouse", as_of=old.created_at).hits[0].why.get("value_chunk")
    ana.redact("notes:journal", old.id)
    assert small_chunks.projector.index.chunks.count() == len(ValueChunker(600).chunks(journal()))
    found = [str(p) for p in (home / "lance").rglob("*") if p.is_file() and b"ZEBRA-CROSSING" in p.read_bytes()]
    assert found == []
