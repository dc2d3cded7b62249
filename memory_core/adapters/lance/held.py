"""The vector leg answered from the vectors ``ResidentColumns`` holds, when a namespace's rows are few.

Once ``prewarm`` was given a budget the stored vectors fit in, every row's vector is in memory
already (the lexical leg reads them). Comparing a query with one namespace's rows there is a
matrix product over a few thousand rows, with no Lance query at all. Through Lance the same leg
is a query planned and run on its threads, plus a scan of the rows appended since the vector
index was last brought up to date (``recent``); under a stream of writes that was most of a
recall's time (docs/benchmarks.md, "The vector leg from held vectors").

The answer is the exact nearest rows under the narrow filter (the namespace and the kinds), every
live row of this version compared: what Lance answers for a table without a vector index, and at
least as near as its index's probes find. A namespace of more than ``HELD_MAX_ROWS`` rows of those
kinds is left to Lance's index, whose cost does not grow with it.

What is cached (``HeldVectorCache``), per fragment as its data files name it (they never change):
a namespace's rows of some kinds, their vectors copied into one contiguous matrix and their
norms; and per deletion file (one per fragment and version that deleted rows), which rows are
live. A product over a contiguous matrix costs a fifth of one over rows gathered anew each
search. The copies take at most ``max_bytes`` (``prewarm`` sets the vector budget again), the
least recently read let go first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .recent import matrix_of

# Past this many candidate rows (a namespace's rows of the kinds asked), Lance's vector index
# answers: a product over 20,000 rows of 256 dimensions takes about 0.5 ms here, a fifth of an
# indexed query, but its copy grows with the namespace where the index's cost does not.
HELD_MAX_ROWS = 20_000
HELD_COLUMNS = ("namespace", "kind", "vector")
_CACHED = 4096


@dataclass(frozen=True, slots=True)
class HeldFilter:
    """The narrow filter of a leg as values: the namespace key and the kinds."""

    namespace: str
    kinds: tuple[str, ...]


def deletion_of(fragment: Any) -> Hashable:
    """What names a fragment's deletion file in a version (None: it has none)."""
    deletion = fragment.metadata.deletion_file
    return None if deletion is None else (deletion.id, deletion.read_version, deletion.num_deleted_rows)


def _matching(array: pa.Array, values: Sequence[str]) -> np.ndarray:
    """A boolean mask of the rows of ``array`` (a string column, dictionary-encoded or not) whose
    value is one of ``values``."""
    if pa.types.is_dictionary(array.type):
        codes = [i for i, v in enumerate(array.dictionary.to_pylist()) if v in values]
        return np.isin(array.indices.to_numpy(zero_copy_only=False), codes)
    return pc.is_in(array, value_set=pa.array(list(values), type=array.type)).to_numpy(zero_copy_only=False)


class HeldVectorCache:
    """What the held-vector leg reads again and again, per fragment identity (see the module doc),
    the least recently read let go past ``_CACHED`` entries or ``max_bytes`` (0: nothing kept)."""

    def __init__(self) -> None:
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self._lock = threading.Lock()
        self._bytes = 0
        self.max_bytes = 0

    def get(self, key: Hashable, make: Callable[[], Any]) -> Any:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found[0]
        value = make()
        size = int(value.nbytes)  # an array, or ``Candidates``
        with self._lock:
            if key not in self._entries and size <= self.max_bytes:
                self._entries[key] = (value, size)
                self._bytes += size
            while self._entries and (len(self._entries) > _CACHED or self._bytes > self.max_bytes):
                self._bytes -= self._entries.popitem(last=False)[1][1]
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0


def _live_offsets(fragment: Any) -> np.ndarray:
    table = fragment.scanner(columns=[], with_row_id=True).to_table()
    return (table.column("_rowid").to_numpy() & np.uint64(0xFFFFFFFF)).astype(np.int64)


@dataclass(frozen=True, slots=True)
class Candidates:
    """One fragment's rows in a namespace and kinds, deleted ones included: their offsets, and
    their vectors and norms as one contiguous matrix (a product over a slice of the fragment's
    matrix gathered anew each search cost five to ten times the product itself)."""

    offsets: np.ndarray
    vectors: np.ndarray
    norms: np.ndarray

    @property
    def nbytes(self) -> int:
        return self.offsets.nbytes + self.vectors.nbytes + self.norms.nbytes


def candidates(
    cache: HeldVectorCache, fragment: Any, files: Any, columns: dict[str, pa.Array], flat: HeldFilter
) -> Candidates:
    def make() -> Candidates:
        mask = _matching(columns["namespace"], (flat.namespace,)) & _matching(columns["kind"], flat.kinds)
        offsets = np.flatnonzero(mask)
        vectors = np.take(matrix_of(columns["vector"], len(mask)), offsets, axis=0)
        return Candidates(offsets, vectors, np.linalg.norm(vectors, axis=1).astype(np.float32))

    return cache.get(("rows", fragment.fragment_id, files, flat), make)


def live(cache: HeldVectorCache, fragment: Any, files: Any, offsets: np.ndarray) -> np.ndarray | None:
    """Which of ``offsets`` are live in this version of the fragment (None: all of them)."""
    deletion = deletion_of(fragment)
    if deletion is None:
        return None

    def make() -> np.ndarray:
        alive = np.zeros(fragment.metadata.physical_rows, dtype=bool)
        alive[_live_offsets(fragment)] = True
        return alive

    return cache.get(("live", fragment.fragment_id, files, deletion), make)[offsets]


Part = tuple[int, Candidates, "np.ndarray | None"]


def nearest(parts: Sequence[Part], vector: np.ndarray, limit: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``limit`` nearest rows by cosine distance (Lance's ``cosine``: 1 - similarity; a row
    or query of zero vector compares with nothing), nearest first and the earlier row first on a
    tie, from ``parts``: per fragment its id, its candidates and which of them are live. Answers
    their row ids and distances."""
    query = np.asarray(vector, dtype=np.float32).ravel()
    query_norm = np.float32(np.linalg.norm(query))
    ids, distances = [], []
    for fragment_id, found, alive in parts:
        if not len(found.offsets):
            continue
        # every candidate compared, the deleted ones dropped after: masking the matrix copies it
        dots = found.vectors @ query
        scale = found.norms * query_norm
        # A zero vector has no cosine with anything: Lance leaves such a row out, and so does this.
        keep = scale > 0 if alive is None else (scale > 0) & alive
        offsets, distance = found.offsets[keep], (1 - dots[keep] / scale[keep]).astype(np.float32)
        distances.append(distance)
        ids.append((np.uint64(fragment_id) << np.uint64(32)) | offsets.astype(np.uint64))
    if not ids:
        return np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.float32)
    row_ids, found_distances = np.concatenate(ids), np.concatenate(distances)
    if len(found_distances) > limit:
        # Rows tied with the last kept one may lie on either side of the cut: keep them all here.
        edge = found_distances[np.argpartition(found_distances, limit - 1)[limit - 1]]
        cut = np.flatnonzero(found_distances <= edge)
        row_ids, found_distances = row_ids[cut], found_distances[cut]
    order = np.lexsort((row_ids, found_distances))[:limit]
    return row_ids[order], found_distances[order]


def held_parts(resident: Any, dataset: Any, flat: HeldFilter, *, max_rows: int = HELD_MAX_ROWS) -> list[Part] | None:
    """Per fragment of ``dataset``, what ``nearest`` compares, from what ``resident`` (the
    ``ResidentColumns``) holds and its ``held_vectors``; None when a fragment's vectors are not
    held (nor loaded now: a large one not read often yet) or the candidates, deleted rows
    included, are more than ``max_rows``."""
    cache: HeldVectorCache = resident.held_vectors
    parts: list[Part] = []
    total = 0
    for fragment in dataset.get_fragments():
        held = resident.held(fragment, HELD_COLUMNS)
        if held is None:
            return None
        found = candidates(cache, fragment, held.files, held.columns, flat)
        total += len(found.offsets)
        if total > max_rows:
            return None
        parts.append((fragment.fragment_id, found, live(cache, fragment, held.files, found.offsets)))
    return parts
