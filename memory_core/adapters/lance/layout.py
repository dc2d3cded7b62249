"""Upgrading an index table written by an older build: the columns added since, made from the
columns it has. Rows, row ids and indexes stay as they are (Lance writes the new columns beside
them)."""

from __future__ import annotations

import json
from typing import Any, Sequence

import lance
import pyarrow as pa

from .read import SPAN_COLUMNS, live_spans

# Columns added after the first tables were written, with the columns each is made from.
# ``live_span`` and ``session`` are derived exactly; ``confidence`` is not in an old row, so it is
# null (its prior reads null as no signal) until the row is written again or the index rebuilt.
LATER_COLUMNS = {"live_span": SPAN_COLUMNS, "session": ("provenance_json",), "confidence": ("fact_id",)}


def missing_columns(names: Sequence[str]) -> list[str]:
    return [c for c in LATER_COLUMNS if c not in set(names)]


def _session(provenance_json: str | None) -> str | None:
    """The run session a row's provenance names; None for anything else (an unreadable
    provenance must not stop a home from opening)."""
    try:
        provenance = json.loads(provenance_json) if provenance_json else None
    except ValueError:
        return None
    session = provenance.get("session") if isinstance(provenance, dict) else None
    return session if isinstance(session, str) else None


def add_columns(dataset: Any, target: pa.Schema, added: Sequence[str]) -> None:
    """Add ``added`` (names of ``LATER_COLUMNS``) to the Lance ``dataset``, typed as ``target``."""
    output = pa.schema([target.field(c) for c in added])

    def derive(batch: pa.RecordBatch) -> pa.RecordBatch:
        made = {
            "live_span": lambda: live_spans(*(batch.column(c) for c in SPAN_COLUMNS)),
            "session": lambda: pa.array(map(_session, batch.column("provenance_json").to_pylist()), type=pa.string()),
            "confidence": lambda: pa.nulls(batch.num_rows, type=pa.float64()),
        }
        return pa.RecordBatch.from_arrays([made[c]() for c in added], schema=output)

    reads = sorted({c for name in added for c in LATER_COLUMNS[name]})
    dataset.add_columns(lance.batch_udf(output_schema=output)(derive), read_columns=reads)
