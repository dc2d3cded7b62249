"""The expiry sweep: what on_expire does to a fact whose expires_at has passed.

Reads hide an expired fact at once; the sweep then records what becomes of it:
``tombstone`` (the default) retires it, ``demote`` keeps it as the fact it was (same status,
so an established fact stays established and keeps its graph facts) with no expiry and its
confidence scaled by ``DEMOTE_FACTOR``, ``anonymize`` keeps the row's shell with its value
replaced. The explicit ``demote`` op is another thing: it makes a fact a proposal again.
"""

from __future__ import annotations

import dataclasses

from ..model import VISIBLE_STATUSES, FactVersion, Op, Status
from ..values import canonical_json, content_sha256
from .flags import Decision, KeyOp

ANONYMIZED_JSON = canonical_json("[expired]")
# What an expiry's demote multiplies confidence by: the same halving as the explicit demote op.
DEMOTE_FACTOR = 0.5


def is_anonymized(state: FactVersion) -> bool:
    return state.value_json == ANONYMIZED_JSON and state.op is Op.EXPIRE


def decide_expiry(op: KeyOp) -> Decision:
    due = [s for s in op.states if s.status.value in VISIBLE_STATUSES and s.expired(op.at)]
    if not due:
        return Decision("unchanged", ())
    change_id = op.new_id()
    rows: list[FactVersion] = []
    for state in sorted(due, key=lambda s: s.version):
        common = dict(
            id=op.new_id(),
            op=Op.EXPIRE,
            version=op.head_version + len(rows) + 1,
            change_id=change_id,
            created_at=op.created_at,
            changed_by=op.actor,
        )
        if state.on_expire == "demote":
            rows.append(
                # The seed's demote: the fact stays what it was (a proposal stays one), only less
                # sure and no longer due; turning it into a proposal would drop its graph facts.
                dataclasses.replace(state, confidence=state.confidence * DEMOTE_FACTOR, expires_at=None, **common)
            )
        elif state.on_expire == "anonymize":
            rows.append(
                dataclasses.replace(
                    state,
                    value_json=ANONYMIZED_JSON,
                    content_sha256=content_sha256(ANONYMIZED_JSON),
                    index_context=None,
                    subject=None,
                    expires_at=None,
                    provenance=dataclasses.replace(state.provenance, source_quote=None),
                    **common,
                )
            )
        else:
            rows.append(dataclasses.replace(state, status=Status.TOMBSTONED, **common))
    return Decision("expired", tuple(rows))
