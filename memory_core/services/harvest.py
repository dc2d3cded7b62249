"""The consolidator's reads: which claimed jobs form one batch, and the batch they are read after.

Harvest jobs a worker claims together are grouped by user, session and run identity, each group
one batch in generation order; a queued extraction is a batch of its own. A batch is read after
the session's spans banked before its first one (``WorkQueue.earlier_spans``: done, pending or
failed, the text is the conversation's all the same), so a span banked after its predecessors
were consolidated still finds what they named. Facts come from the batch's own spans only.
"""

from __future__ import annotations

from typing import Sequence

from ..errors import InvalidInput
from ..extraction.harvest import CONTEXT_SPANS, HarvestBatch, check_harvest_payload, harvest_batch
from ..ports import QueueRow
from ..session import Session
from ..values import canonical_json


def claimed_batches(rows: Sequence[QueueRow]) -> list[list[QueueRow]]:
    """The claimed rows as batches, in the order their first row was claimed."""
    batches: dict[object, list[QueueRow]] = {}
    for row in rows:
        key: object = row.queue_id
        if row.kind == "harvest":
            try:
                body = check_harvest_payload(row.payload)
            except InvalidInput:
                pass  # a malformed span runs alone, and fails alone
            else:
                key = (row.namespace, body["session"], canonical_json(body["identity"], levels_above=2, max_chars=None))
        batches.setdefault(key, []).append(row)
    return [sorted(batch, key=_banked_order) for batch in batches.values()]


def _banked_order(row: QueueRow) -> tuple:
    generation = row.payload.get("generation") if isinstance(row.payload, dict) else None
    return (generation if isinstance(generation, int) else 0, row.created_at, row.queue_id)


def read_batch(session: Session, rows: Sequence[QueueRow]) -> HarvestBatch:
    """The batch of harvest ``rows`` (one session's, banked order), read after the spans banked
    before the first of them; an earlier span the queue cannot read back is left out."""
    spans = [check_harvest_payload(row.payload) for row in rows]
    first = rows[0]
    claimed = {row.queue_id for row in rows}
    earlier = []
    for row in session.queue.earlier_spans(
        first.namespace,
        spans[0]["session"],
        generation=spans[0]["generation"],
        banked_at=first.created_at,
        limit=CONTEXT_SPANS,
    ):
        if row.queue_id in claimed:
            continue
        try:
            earlier.append(check_harvest_payload(row.payload))
        except InvalidInput:
            continue  # written by hand or an older build: it cannot be read as conversation
    return harvest_batch(spans, earlier)
