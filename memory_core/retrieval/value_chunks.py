"""Long values: a fact whose value is longer than the chunk size is also found by its passages.

Pure. The fact row stays whole (one row, one version, one vector of the whole value); its value
is *also* cut into chunks, each embedded on its own, as a retrieval projection beside the index
(``adapters.lance.value_chunks``). One vector for a long value blurs every passage into one
average; a query about one paragraph matches that paragraph's chunk far better.

A search's vector leg folds the chunks it matched onto their rows (``fold_value_chunks``): a row
is answered once, with the better of its own cosine and its best chunk's, and its ``why`` names
the chunk that matched. A chunk counts only while the row's served version is the one it was cut
from, so a revised or deleted value's old chunks never answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..errors import InvalidInput

# The chunk size: a value of more characters than this is also chunked, into passages of at
# most this many characters. The document plane's chunk size (``documents.MAX_CHUNK_CHARS``):
# about 300 tokens, a paragraph or two, well inside every embedder's window.
VALUE_CHUNK_CHARS = 1200
MIN_VALUE_CHUNK_CHARS = 200  # smaller chunks carry too few words to embed on their own
MAX_VALUE_CHUNK_CHARS = 20_000
WHY = "value_chunk"  # the key of a hit's ``why`` a chunk match fills in

_BREAKS = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"(?<=[.!?])\s+"), re.compile(r"\s+"))


@dataclass(frozen=True, slots=True)
class ValueChunk:
    index: int
    start: int  # where in the value's text it starts: the chunks are exact slices of the text
    text: str


@dataclass(frozen=True, slots=True)
class ValueChunker:
    """Cuts a long value's text at a paragraph break, else a line break, else a sentence end,
    else a space, as late as the chunk size allows; a run with none of those is cut hard."""

    max_chars: int = VALUE_CHUNK_CHARS

    def __post_init__(self) -> None:
        if type(self.max_chars) is not int or not MIN_VALUE_CHUNK_CHARS <= self.max_chars <= MAX_VALUE_CHUNK_CHARS:
            raise InvalidInput(
                f"the value chunk size is a whole number of characters from {MIN_VALUE_CHUNK_CHARS} "
                f"to {MAX_VALUE_CHUNK_CHARS}",
                field="max_chars",
            )

    def chunks(self, text: str) -> list[ValueChunk]:
        """The chunks of ``text``; none when it fits in one (a short value is not chunked)."""
        if len(text) <= self.max_chars:
            return []
        out: list[ValueChunk] = []
        start = 0
        while start < len(text):
            end = min(start + self.max_chars, len(text))
            if end < len(text):
                end = _break_before(text, start, end)
            piece = text[start:end]
            if piece.strip():
                out.append(ValueChunk(len(out), start, piece))
            start = end
        return out


def _break_before(text: str, start: int, end: int) -> int:
    """The last good place to cut ``text[start:end]`` in its second half (so no chunk is tiny)."""
    floor = start + (end - start) // 2
    window = text[floor:end]
    for pattern in _BREAKS:
        found = [m.end() for m in pattern.finditer(window)]
        if found and found[-1] < len(window):
            return floor + found[-1]
    return end


def fold_value_chunks(
    rows: Sequence[dict[str, Any]],
    chunk_hits: Sequence[Mapping[str, Any]],
    parents: Mapping[str, dict[str, Any]],
    limit: int,
) -> list[dict[str, Any]]:
    """The vector leg's ``rows`` with the matched chunks folded onto their rows, best first, at
    most ``limit``. ``chunk_hits``: chunk rows (fact_id, version_id, chunk, chunks, text,
    ``_distance``), best first; ``parents``: the served rows of chunk facts the leg did not return.
    A chunk of another version than its row's served one is stale and dropped; a row takes its
    best chunk's distance when that is nearer than its own, and its ``_why`` names that chunk."""
    by_id = {row["fact_id"]: row for row in rows}
    folded = list(rows)
    seen: set[str] = set()
    for hit in chunk_hits:
        fact_id = hit["fact_id"]
        if fact_id in seen:
            continue  # its best chunk came first
        row = by_id.get(fact_id) or parents.get(fact_id)
        if row is None or row.get("version_id") != hit["version_id"]:
            continue
        seen.add(fact_id)
        distance = float(hit["_distance"])
        if "_distance" in row and float(row["_distance"]) <= distance:
            continue  # the whole value matches better than any passage of it
        row["_distance"] = distance
        row.setdefault("_why", {})[WHY] = {"chunk": int(hit["chunk"]), "of": int(hit["chunks"]), "text": hit["text"]}
        if fact_id not in by_id:
            by_id[fact_id] = row
            folded.append(row)
    folded.sort(key=lambda r: (float(r["_distance"]), r["fact_id"]))
    return folded[:limit]
