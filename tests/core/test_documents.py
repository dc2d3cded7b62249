"""The Document plane: chunks that give the body back, entity metadata, search, history."""

from __future__ import annotations

from datetime import timedelta

import pytest

from memory_core import Identity, Memory
from memory_core.documents import chunk_markdown
from memory_core.errors import InvalidInput, NotFound
from tests.conftest import store_snapshot

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

RUNBOOK = (
    """Owned by the platform team.

# Checkout API runbook

The checkout-api service handles payments.

## Deploy

- run the canary first
- wait for two approvals

```bash
make deploy SERVICE=checkout-api
```

## Rollback

"""
    + "Roll back with the previous image tag and page the owner. " * 40
    + "\n"
)


@pytest.fixture
def docs_memory(home, clock):
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        yield memory


@pytest.fixture
def tool(docs_memory):
    return docs_memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))


def test_chunks_follow_headings_and_give_the_body_back():
    chunks = chunk_markdown(RUNBOOK, max_chars=600)
    assert "".join(c.text for c in chunks) == RUNBOOK
    assert chunks[0].heading_path == () and chunks[1].heading_path == ("Checkout API runbook",)
    assert ("Checkout API runbook", "Deploy") in [c.heading_path for c in chunks]
    assert all(len(c.text) <= 600 for c in chunks)


def test_put_get_list_search_and_delete(tool, clock):
    meta = {"subject": "checkout-api", "entity_type": "service", "fact_class": "runbook", "owner": "platform"}
    result = tool.doc_put("checkout-runbook", RUNBOOK, metadata=meta)
    assert result.verdict == "written" and result.details["chunks"] >= 3
    doc = tool.doc_get("checkout-runbook")
    assert doc.body == RUNBOOK and doc.title == "Checkout API runbook" and doc.entity
    assert doc.metadata["owner"] == "platform"
    assert [d.to_dict() for d in tool.doc_list()] == [
        {
            "key": "checkout-runbook",
            "title": "Checkout API runbook",
            "chunks": result.details["chunks"],
            "metadata": meta,
        }
    ]
    hits = tool.search("how many approvals before deploy", sources=["document"]).hits
    assert hits and hits[0].key.startswith("doc:checkout-runbook#") and hits[0].kind.value == "document"
    assert "approvals" in hits[0].value
    clock.advance(timedelta(days=1))
    tool.doc_delete("checkout-runbook")
    assert tool.doc_get("checkout-runbook") is None and tool.doc_list() == []
    assert tool.search("approvals", sources=["document"]).hits == ()
    assert (
        tool.doc_get(
            "checkout-runbook", as_of=clock.now() - timedelta(hours=1), known_at=clock.now() - timedelta(hours=1)
        ).body
        == RUNBOOK
    )


def test_a_second_put_rewrites_only_what_changed_and_retires_dropped_chunks(tool, clock):
    tool.doc_put("notes", "# A\n\nalpha\n\n# B\n\nbeta\n\n# C\n\ngamma\n")
    clock.advance(timedelta(days=1))
    again = tool.doc_put("notes", "# A\n\nalpha\n\n# B\n\nBETA\n")
    assert again.details["chunks_retired"] == 1 and again.details["chunks_unchanged"] == 1
    assert tool.doc_get("notes").body == "# A\n\nalpha\n\n# B\n\nBETA\n"
    assert tool.get("doc:notes#0002") is None
    before = tool.doc_get("notes", as_of=clock.now() - timedelta(hours=1), known_at=clock.now() - timedelta(hours=1))
    assert before.body.endswith("gamma\n")
    assert tool.doc_put("notes", "# A\n\nalpha\n\n# B\n\nBETA\n").verdict == "unchanged"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"doc_key": "", "body": "# x"},
        {"doc_key": "a#b", "body": "# x"},
        {"doc_key": "k", "body": "   "},
        {"doc_key": "k", "body": "# x", "metadata": {"subject": "only the subject"}},
        {"doc_key": "k", "body": "# x", "metadata": {"nested": {"a": 1}}},
        {"doc_key": "k", "body": "# x", "metadata": ["not", "an", "object"]},
    ],
    ids=["empty-key", "hash-in-key", "empty-body", "partial-entity", "nested-metadata", "metadata-list"],
)
def test_bad_documents_are_refused_and_write_nothing(docs_memory, tool, kwargs):
    memory = docs_memory
    before = store_snapshot(memory)
    with pytest.raises(InvalidInput):
        tool.doc_put(**kwargs)
    assert store_snapshot(memory) == before


def test_deleting_a_missing_document_is_not_found(tool):
    with pytest.raises(NotFound):
        tool.doc_delete("never-written")


def test_documents_never_cross_scopes(docs_memory, tool):
    tool.doc_put("private", "# Mine\n\nonly ana sees this\n")
    bea = docs_memory.for_run(Identity(tenant="acme", user="bea"))
    assert bea.doc_get("private") is None and bea.doc_list() == []
    assert bea.search("only ana sees this", sources=["document"]).hits == ()


def test_a_document_is_answered_once_by_its_best_chunk_on_every_page(tool):
    # Every chunk of "deploy" names the canary; another document and a note name it once each.
    body = "".join(f"# Step {n}\n\nthe canary deploy step {n} waits for the canary\n\n" for n in range(6))
    tool.doc_put("deploy", body)
    tool.doc_put("incident", "# Incident\n\nthe canary failed once\n")
    tool.set("canary_owner", "the canary belongs to the platform team", kind="note")
    first = tool.search("canary deploy step", k=2)
    pages, cursor = [first], first.next_cursor
    while cursor is not None:
        page = tool.search("canary deploy step", k=2, cursor=cursor)
        pages.append(page)
        cursor = page.next_cursor
    hits = [h for page in pages for h in page.hits]
    keys = [h.key for h in hits]
    assert len(keys) == len(set(keys))
    chunks = [h for h in hits if h.document is not None]
    assert sorted(h.document for h in chunks) == ["deploy", "incident"]  # each document once
    deploy = next(h for h in chunks if h.document == "deploy")
    assert deploy.key.startswith("doc:deploy#") and deploy.document_chunks == 6
    assert keys.index(deploy.key) == 0  # its best chunk ranks where that chunk ranked
    assert "canary_owner" in keys  # the note is not crowded out
    assert all(h.document is None and h.document_chunks == 0 for h in hits if h.kind.value != "document")
