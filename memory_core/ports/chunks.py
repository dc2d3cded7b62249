"""The port that cuts a long value into chunks for retrieval (``retrieval.value_chunks``)."""

from __future__ import annotations

from typing import Protocol, Sequence

from ..retrieval.value_chunks import ValueChunk


class Chunker(Protocol):
    """Cuts a value's text into chunks (none: the value is short, it is found by its row alone).
    ``ValueChunker`` is the default. An implementation may also have ``max_chars``: a stored value
    no longer than that is skipped without being decoded. Whatever it raises never fails a write."""

    def chunks(self, text: str) -> Sequence[ValueChunk]: ...
