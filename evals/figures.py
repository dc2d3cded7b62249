"""Figures for people: a key's timeline as a reviewer walks it (the fact-timeline notebook), and
the axes every evaluation plot is drawn on and saved from."""

from __future__ import annotations

from contextlib import contextmanager
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, Iterator, Sequence

from memory_core.history_view import instants, lanes
from memory_core.model import VISIBLE_STATUSES, FactVersion


def timeline(history: Sequence[FactVersion], as_of: datetime | None = None, known_at: datetime | None = None) -> Any:
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


@contextmanager
def saved_plot(path: Path, figsize: tuple[float, float], *, title: str, xlabel: str, ylabel: str) -> Iterator[Any]:
    """Axes to draw an evaluation's lines on; labelled, gridded, with a legend, and written to
    ``path`` (PNG, off-screen) when the block ends."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=figsize)
    try:
        yield ax
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(path, dpi=120)
    finally:
        plt.close(fig)
