"""What a reviewer sees of one key's timeline: pure views over its version log, and the figure.

``lanes`` turns the append-only history into one lane per fact (its states in transaction
order); ``believed_at`` / ``true_at`` answer the two sliders; ``provenance`` lists a version's
origin. ``figure`` draws valid intervals as bars, each state's created_at as a mark,
supersession as an arrow to the fact that replaced it, and tombstones as crosses.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Sequence

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


def figure(history: Sequence[FactVersion], as_of: datetime | None = None, known_at: datetime | None = None) -> Any:
    """A matplotlib Figure of the key's facts as the store held them at ``known_at`` (all of it
    when None): one row per fact, its valid interval as a bar (solid while served, hatched once
    superseded, grey when tombstoned or rejected), each write as a tick under the bar, an arrow
    from a closed fact to the fact that closed it, and lines at ``as_of`` and ``known_at``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.dates as mdates
    import matplotlib.pyplot as plt

    history = [r for r in history if known_at is None or r.created_at <= known_at]
    rows = lanes(history)
    valid, created = instants(history)
    horizon = max([*valid, *created]) + timedelta(days=30) if history else datetime.now()
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.6 * max(len(rows), 1)))
    ids = {lane.fact_id: n for n, lane in enumerate(rows)}
    by_row_id = {r.id: r for r in history}
    for n, lane in enumerate(rows):
        last = lane.latest
        end = last.invalid_at or horizon
        hidden = last.status.value not in VISIBLE_STATUSES
        colour = "#b0b0b0" if hidden else ("#f4a261" if last.status.value == "superseded" else "#2a9d8f")
        width = mdates.date2num(end) - mdates.date2num(last.valid_at)
        ax.barh(
            n,
            max(width, 0.3),
            left=mdates.date2num(last.valid_at),
            height=0.5,
            color=colour,
            hatch="//" if last.status.value == "superseded" else None,
            edgecolor="#264653",
        )
        ax.text(mdates.date2num(last.valid_at), n + 0.32, f"{lane.value}  [{last.status.value}]", fontsize=8)
        for state in lane.states:
            ax.plot(mdates.date2num(state.created_at), n - 0.32, marker="|", color="#264653", markersize=8)
            if state.status.value in ("tombstoned", "rejected"):
                ax.plot(mdates.date2num(state.created_at), n, marker="x", color="#e63946", markersize=9)
        closer = by_row_id.get(last.superseded_by or "")
        if closer is not None and closer.fact_id in ids:
            ax.annotate(
                "",
                xy=(mdates.date2num(closer.valid_at), ids[closer.fact_id]),
                xytext=(mdates.date2num(end), n),
                arrowprops={"arrowstyle": "->", "color": "#264653"},
            )
    if as_of is not None:
        ax.axvline(mdates.date2num(as_of), color="#e76f51", linestyle="--", label="as_of (valid time)")
    if known_at is not None:
        ax.axvline(mdates.date2num(known_at), color="#6d597a", linestyle=":", label="known_at (transaction time)")
    ax.set_yticks(range(len(rows)), [f"fact {n + 1}" for n in range(len(rows))])
    ax.xaxis_date()
    ax.set_ylim(-0.8, len(rows) - 0.2 if rows else 0.8)
    if as_of is not None or known_at is not None:
        ax.legend(loc="lower right", fontsize=8)
    ax.set_title("valid intervals (bars), writes (ticks), retirements (x), supersession (arrows)", fontsize=9)
    fig.tight_layout()
    return fig
