"""A search leg's per-candidate columns, kept in memory fragment by fragment.

A leg needs a few narrow columns of each candidate it returns (its fact id and the time span it
is checked against). Read through the query, each costs a random read per row and column, a
good part of a leg at 1M rows (docs/benchmarks.md, "Resident columns"). Held in memory they cost
a lookup: a leg asks Lance for row ids and scores only, and the columns come from here.

Correct by construction because a Lance data file never changes: a fragment is known by its id
and the paths of its data files, and one whose files differ is loaded anew (a column added; a
table dropped and made again, by this process or another, numbers its fragments from 0 once
more). A fragment is loaded with its deleted rows, so a row's offset is its place in the arrays
whichever version deleted what.
Without stable row ids (this index never enables them) a row id is the row's address,
``fragment_id << 32 | offset``.

What is held: ``RESIDENT_COLUMNS`` (``lance_read``), the legs' columns and the narrow columns of
a hit, once a search has read them; the wide columns of a hit (text, value, ...) only when
``load`` is asked for them (``prewarm``); the memory this takes is measured in docs/benchmarks.md.
Loading a large fragment's columns takes a good part of a second, so a fragment of more than
``EAGER_ROWS`` rows is loaded only once searches have read it ``LOAD_AFTER`` times (until then
its rows are read from the files, as a take).

The stored vectors are held too once ``prewarm`` is given a budget they fit in
(``vector_budget``): the lexical leg of a score-fusing recipe reads each candidate's vector, and
from the files that was about 3 ms of a 100,000-row search (docs/benchmarks.md, "Vectors held
for the lexical leg"). Each version is weighed against the budget again (``holds_vectors``): a
table that outgrew it is read from the files, and the vectors held are let go.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np
import pyarrow as pa

from .held import HeldVectorCache

# Past this many held fragments, or this many versions after the last look, those the latest
# version no longer has are let go.
_PRUNE_AT = 256
_PRUNE_EVERY = 64
# A fragment is loaded the first time a search reads it when it is this small; a larger one once
# searches have read it this many times (a search reads two legs and a take), so a one-off recall
# on a large home reads its few rows from the files instead of loading a fragment for them.
EAGER_ROWS = 65_536
LOAD_AFTER = 6


@dataclass(frozen=True, slots=True)
class HeldFragment:
    files: tuple[str, ...]
    columns: dict[str, pa.Array]  # every physical row, deleted ones included, in offset order

    def take(self, offsets: np.ndarray, names: Sequence[str]) -> list[pa.Array]:
        index = pa.array(offsets)
        return [_plain(self.columns[n].take(index)) for n in names]


def _plain(array: pa.Array) -> pa.Array:
    return array.dictionary_decode() if pa.types.is_dictionary(array.type) else array


def _compact(array: pa.Array) -> pa.Array:
    """A string column of few distinct values (scope, status, kind, tenant, ...) as a dictionary
    with the narrowest indices that hold it: a byte or two a row instead of the string's."""
    if not pa.types.is_string(array.type) or len(array) < 64:
        return array
    encoded = array.dictionary_encode()
    distinct = len(encoded.dictionary)
    if distinct * 4 >= len(array):
        return array
    indices = pa.int8() if distinct <= 127 else pa.int16() if distinct <= 32767 else pa.int32()
    return encoded.cast(pa.dictionary(indices, pa.string()))


def _files(fragment: Any) -> tuple[str, ...]:
    return tuple(sorted(f.path for f in fragment.metadata.files))


class ResidentColumns:
    """Columns of one table held per fragment, for every version of it (see the module doc)."""

    def __init__(self, *, eager_rows: int = EAGER_ROWS, load_after: int = LOAD_AFTER) -> None:
        self.eager_rows, self.load_after = eager_rows, load_after
        self._fragments: dict[int, HeldFragment] = {}
        self._touches: dict[int, int] = {}  # reads of fragments not held yet
        self._lock = threading.Lock()
        self._prune_at = _PRUNE_AT
        self._versions_since_prune = 0
        # The bytes the stored vectors may take in memory (``holds_vectors``); 0: never held.
        self.vector_budget = 0
        self.held_vectors = HeldVectorCache()  # what the vector leg from held vectors reuses (``held``)

    def _load(self, fragment: Any, files: tuple[str, ...], names: Sequence[str]) -> HeldFragment:
        fragment_id = fragment.fragment_id
        with self._lock:  # two legs may ask for the same fragment at once: load it once
            held = self._fragments.get(fragment_id)
            columns = dict(held.columns) if held is not None and held.files == files else {}
            missing = list(dict.fromkeys(n for n in names if n not in columns))
            if missing:
                table = fragment.to_table(columns=missing, with_row_id=True, include_deleted_rows=True)
                if table.num_rows != fragment.metadata.physical_rows:
                    raise LookupError(
                        f"fragment {fragment_id} read {table.num_rows} rows of {fragment.metadata.physical_rows}"
                    )
                columns.update((n, _compact(table.column(n).combine_chunks())) for n in missing)
                held = self._fragments[fragment_id] = HeldFragment(files, columns)
            return held

    def _read(
        self,
        dataset: Any,
        fragment_id: int,
        row_ids: np.ndarray,
        offsets: np.ndarray,
        names: Sequence[str],
        on_demand: bool,
    ) -> list[pa.Array] | None:
        fragment = dataset.get_fragment(fragment_id)
        if fragment is None:
            raise LookupError(f"fragment {fragment_id} is not in version {dataset.version}")
        held = self.held(fragment, names, load=on_demand)
        if held is not None:
            return held.take(offsets, names)
        if not on_demand:
            return None
        # Not held yet: from the files, as a take (a one-off search need not load a large fragment).
        table = dataset._take_rows(row_ids.tolist(), columns=list(names))
        return [table.column(n).combine_chunks() for n in names]

    def holding(self) -> set[str]:
        """Every column held of some fragment."""
        with self._lock:
            return {n for held in self._fragments.values() for n in held.columns}

    def hold_small(self, dataset: Any) -> None:
        """Load the columns held of other fragments for each small fragment of ``dataset`` not
        holding them yet (those a fold of appends just wrote), so no search pays for it."""
        names = sorted(self.holding())
        for fragment in dataset.get_fragments() if names else ():
            if fragment.metadata.physical_rows <= self.eager_rows:
                self._load(fragment, _files(fragment), names)

    def seed(self, fragment: Any, rows: pa.Table, schema: pa.Schema) -> bool:
        """Hold a fragment this process appended from the rows it wrote (in order: the
        fragment's rows), so no search reads them back: every column held of other fragments
        that ``rows`` has, as ``schema`` (the table's) types it. False when it was held already
        (a search read it first) or there is nothing to hold."""
        files = _files(fragment)
        found = self._fragments.get(fragment.fragment_id)
        names = self.holding() & set(rows.column_names) & set(schema.names)
        if found is not None and found.files == files or not names or rows.num_rows != fragment.metadata.physical_rows:
            return False
        columns = {n: _compact(rows.column(n).combine_chunks().cast(schema.field(n).type)) for n in sorted(names)}
        with self._lock:
            if fragment.fragment_id not in self._fragments:
                self._fragments[fragment.fragment_id] = HeldFragment(files, columns)
        return True

    def held(self, fragment: Any, names: Sequence[str], *, load: bool = True) -> HeldFragment | None:
        """The fragment (of the version being read) with ``names`` held; with ``load``, loaded now
        when it is small or searches have read it ``load_after`` times; None when it is not."""
        files = _files(fragment)
        fragment_id = fragment.fragment_id
        held = self._fragments.get(fragment_id)
        if held is not None and held.files == files and all(n in held.columns for n in names):
            return held
        if not load:
            return None
        with self._lock:  # the two legs of a search (and other searches) count at once
            touches = self._touches[fragment_id] = self._touches.get(fragment_id, 0) + 1
        if fragment.metadata.physical_rows <= self.eager_rows or touches >= self.load_after:
            return self._load(fragment, files, names)
        return None

    def gather(
        self, dataset: Any, row_ids: np.ndarray, names: Sequence[str], *, on_demand: bool = True
    ) -> dict[str, pa.Array] | None:
        """``names`` of the rows ``row_ids`` (addresses in ``dataset``, rows it has), in the order
        asked. ``on_demand``: a fragment not held is loaded or read from the files (the narrow
        columns); otherwise the answer is None unless every fragment holds ``names`` already
        (the wide columns, held only once ``load`` was asked for them)."""
        row_ids = np.asarray(row_ids, dtype=np.uint64)
        if not len(row_ids) or not names:
            return {n: pa.array([], type=dataset.schema.field(n).type) for n in names}
        fragment_ids = (row_ids >> np.uint64(32)).astype(np.int64)
        offsets = (row_ids & np.uint64(0xFFFFFFFF)).astype(np.int64)
        parts: dict[str, list[pa.Array]] = {n: [] for n in names}
        placed = []
        for fragment_id in np.unique(fragment_ids):
            chosen = np.flatnonzero(fragment_ids == fragment_id)
            arrays = self._read(dataset, int(fragment_id), row_ids[chosen], offsets[chosen], names, on_demand)
            if arrays is None:
                return None
            for n, array in zip(names, arrays):
                parts[n].append(array)
            placed.append(chosen)
        order = pa.array(np.argsort(np.concatenate(placed), kind="stable"))
        return {n: pa.concat_arrays(parts[n]).take(order) for n in names}

    def load(self, dataset: Any, names: Sequence[str]) -> int:
        """Load ``names`` of every fragment of ``dataset`` now; answers the bytes held."""
        for fragment in dataset.get_fragments():
            self._load(fragment, _files(fragment), names)
        return self.nbytes()

    def prune(self, dataset: Any) -> None:
        """Let go of fragments ``dataset`` (a new version) no longer has: once many are held, and
        every ``_PRUNE_EVERY`` versions in any case, so the rows of fragments another process
        compacted away (a purge, say) are not kept in memory long. Listing the fragments costs a
        few milliseconds on a large table, so it is not done at every version."""
        self._versions_since_prune += 1
        if len(self._fragments) <= self._prune_at and self._versions_since_prune < _PRUNE_EVERY:
            return
        live = {f.fragment_id for f in dataset.get_fragments()}
        with self._lock:
            for fragment_id in [f for f in self._fragments if f not in live]:
                del self._fragments[fragment_id]
            self._touches = {f: n for f, n in self._touches.items() if f in live}
            self._prune_at = max(_PRUNE_AT, 2 * len(self._fragments))
            self._versions_since_prune = 0

    def holds_vectors(self, dataset: Any) -> bool:
        """Are the stored vectors of ``dataset`` (a version) held, or to be held as searches read
        them: a budget is set and every physical row's vector fits in it. Over it, the vectors
        held so far are let go."""
        if not self.vector_budget or "vector" not in dataset.schema.names:
            return False
        field = dataset.schema.field("vector").type
        rows = sum(f.metadata.physical_rows for f in dataset.get_fragments())
        if rows * field.list_size * (field.value_type.bit_width // 8) <= self.vector_budget:
            return True
        self.drop("vector")
        self.held_vectors.clear()  # the vector leg's copies of them too
        return False

    def drop(self, name: str) -> None:
        """Let go of column ``name`` of every fragment held."""
        with self._lock:
            for fragment_id, held in list(self._fragments.items()):
                if name in held.columns:
                    columns = {n: a for n, a in held.columns.items() if n != name}
                    self._fragments[fragment_id] = HeldFragment(held.files, columns)

    def nbytes(self) -> int:
        return sum(a.nbytes for f in list(self._fragments.values()) for a in f.columns.values())

    def clear(self) -> None:
        with self._lock:
            self._fragments.clear()
            self._touches.clear()
        self.held_vectors.clear()
