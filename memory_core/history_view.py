"""What a reviewer sees of one key's history: pure views over its version log.

``lanes`` turns the append-only history into one lane per fact (its states in transaction
order); ``believed_at`` / ``true_at`` answer the two sliders; ``provenance`` lists a version's
origin. The figure of a timeline is drawn outside the library (``evals.figures.timeline``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from .model import VISIBLE_STATUSES, FactVersion
from .temporal import live_at


@dataclass(frozen=True, slots=True)
class Lane:
    fact_id: str
    value: str
    states: tuple[FactVersion, ...]  # oldest first

    @property
    def latest(self) -> FactVersion:
        return self.states[-1]


def short_value(state: FactVersion, limit: int = 48) -> str:
    text = state.value if isinstance(state.value, str) else json.dumps(state.value, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def lanes(history: Sequence[FactVersion]) -> list[Lane]:
    """One lane per fact, in the order the facts were first stated."""
    by_fact: dict[str, list[FactVersion]] = {}
    for row in sorted(history, key=lambda r: r.version):
        by_fact.setdefault(row.fact_id, []).append(row)
    return [Lane(fid, short_value(rows[0]), tuple(rows)) for fid, rows in by_fact.items()]


def believed_at(history: Sequence[FactVersion], known_at: datetime | None) -> list[FactVersion]:
    """The latest state of each fact written at or before ``known_at`` (all of them when None)."""
    latest: dict[str, FactVersion] = {}
    for row in sorted(history, key=lambda r: r.version):
        if known_at is None or row.created_at <= known_at:
            latest[row.fact_id] = row
    return list(latest.values())


def true_at(states: Sequence[FactVersion], as_of: datetime) -> FactVersion | None:
    """The served fact whose valid interval holds ``as_of``."""
    for state in states:
        if state.status.value in VISIBLE_STATUSES and live_at(state.valid_at, state.invalid_at, as_of):
            return state
    return None


def instants(history: Sequence[FactVersion]) -> tuple[list[datetime], list[datetime]]:
    """The valid-time edges and the transaction times of a history: where the sliders stop."""
    valid = sorted({r.valid_at for r in history} | {r.invalid_at for r in history if r.invalid_at})
    created = sorted({r.created_at for r in history})
    return valid, created


def provenance(state: FactVersion, judgements: Sequence[dict] = ()) -> list[tuple[str, str]]:
    """The provenance panel of one version; ``judgements`` are resolver records naming its fact
    (who judged it, what they said, what was done)."""
    p = state.provenance
    judged = [
        (
            f"judged by {j['judge']}",
            f"{j['verdict']} {j['confidence']:.2f} vs {j['peer_key']}: {j['action']}"
            + (f" ({j['reason']})" if j.get("reason") else ""),
        )
        for j in judgements
        if state.fact_id in (j.get("judged_fact"), j.get("peer_fact"))
    ]
    return _fields(state, p) + judged


def _fields(state: FactVersion, p) -> list[tuple[str, str]]:
    return [
        (label, "" if value is None else str(value))
        for label, value in (
            ("version", f"v{state.version} ({state.op.value}, {state.status.value})"),
            ("row id", state.id),
            ("written at", state.created_at.isoformat()),
            ("changed by", state.changed_by),
            ("stated by", p.actor),
            ("tenant", p.tenant),
            ("session", p.session),
            ("run", p.run),
            ("agent", p.agent),
            ("model", p.model),
            ("origin", p.origin),
            ("source quote", p.source_quote),
            ("source turn", p.source_turn),
            ("source span", p.source_span),
            ("compaction generation", p.compaction_generation),
            ("source class", state.source_class),
            ("sensitivity", state.sensitivity),
            ("pinned / locked", f"{state.pinned} / {state.locked}"),
            ("conflicts with", ", ".join(state.conflict_with)),
            ("superseded by", state.superseded_by),
            ("content sha256", state.content_sha256),
        )
    ]
