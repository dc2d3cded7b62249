"""The record an Undo of a retirement leaves: ``unsupersede``, naming the retirement it undid.

A retirement by the resolver, a reviewer or an accepted Dreams proposal is a ``supersede`` row on
the retired fact and one ``retire`` record. ``restore`` on that fact's key brings the fact back;
these functions decide, from the rows the Undo reverses and the namespace's records, which
``unsupersede`` records it writes: one per retired fact whose retirement has a record, naming that
record in ``reason`` (``undoes <record_id>``). A fact retired by a point write (a same-key
supersession or ``refines``) has no record, and its Undo writes none.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from ..model import FactVersion, Op

UNSUPERSEDE = "unsupersede"
UNDOES = "undoes "  # the reason's prefix; the retirement's record id follows


def retirement_of(state: FactVersion, records: Sequence[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    """The ``retire`` record that retired ``state`` (its newest at or before the retirement row)."""
    if state.op is not Op.SUPERSEDE:
        return None
    found = [
        r
        for r in records
        if r["action"] == "retire"
        and r["peer_fact"] == state.fact_id
        and (r["tenant"], r["scope"], r["owner_id"]) == (state.tenant, state.scope.value, state.owner_id)
        and r["recorded_at"] <= state.created_at
    ]
    return max(found, key=lambda r: (r["recorded_at"], r["record_id"])) if found else None


def unsupersede_records(
    undone: Sequence[FactVersion],
    records: Sequence[Mapping[str, Any]],
    new_id: Callable[[], str],
    actor: str,
    at: datetime,
) -> list[dict[str, Any]]:
    """``undone``: each fact's row the Undo reverses (its current, retired state)."""
    out = []
    for state in undone:
        retired = retirement_of(state, records)
        if retired is None:
            continue
        out.append(
            {
                "record_id": new_id(),
                "tenant": state.tenant,
                "scope": state.scope.value,
                "owner_id": state.owner_id,
                "action": UNSUPERSEDE,
                "judged_fact": retired["judged_fact"],
                "peer_fact": state.fact_id,
                "peer_key": state.key,
                "verdict": "undo",
                "confidence": 1.0,
                "judge": actor,
                "recorded_at": at,
                "reason": f"{UNDOES}{retired['record_id']}",
            }
        )
    return out
