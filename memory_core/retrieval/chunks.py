"""Chunk hits folded to their document: a search answers a document once, by its best chunk.

Pure. A document's chunks are rows of their own in the index, and a query a document answers
well often matches several of them; listed one by one they would crowd every other answer out of
the top k. Folding keeps the best-ranked chunk of each document where it ranks, drops the
document's other chunks from the ranking, and counts them on the one kept. It runs on the whole
fused ranking before the first page is cut, so paging stays stable and a document is answered on
one page only.
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence, TypeVar

Item = TypeVar("Item", bound=tuple)


def fold_chunks(fused: Sequence[Item], documents: Mapping[str, str]) -> list[Item]:
    """``fused`` with each document's chunks after its best-ranked one taken out. ``documents``:
    the fact id of each chunk candidate -> its document's key. The chunk kept carries
    ``_document`` (that key) and ``_document_chunks`` (how many of the document's chunks were
    candidates, itself included)."""
    kept: list[Item] = []
    best: dict[str, dict[str, Any]] = {}
    for item in fused:
        row = item[0]
        document = documents.get(row["fact_id"])
        if document is None:
            kept.append(item)
        elif document in best:
            best[document]["_document_chunks"] += 1
        else:
            best[document] = row
            row["_document"], row["_document_chunks"] = document, 1
            kept.append(item)
    return kept
