"""What a Dreams pass proposes, decided by pure functions over what it read: live facts (less
the rows Dreams itself wrote), the window's events and recalls, resolver records and decision
traces (less its own). Each answers drafts; the service queues the ones not made before.

The four rules, each kept simple so a reviewer can check it:

- **merge**: consolidation's clustering (``consolidation.clusters``) over the mergeable live
  rows; the summary is the offline rule merger's (every distinct statement, nothing invented).
- **retire**: a pair flagged against each other (a row's ``conflict_with``, or a pair whose
  latest resolver record is a flag), both live: the older statement (by valid time, then by
  when it was recorded) is proposed for retirement behind the newer one.
- **age_out**: an active fact no write has touched for ``stale_days`` (its newest row is that
  old), that no event of the window names and no render or context surfaced in the window.
  Pinned, locked, high, expiring rows (their expiry already decides) and documents never age out.
- **procedure**: ``min_failures`` or more decisions under one frame intent whose outcome reads
  as a failure in the window, and more failures than other outcomes: a note
  (``procedure:<intent>``) quoting those outcomes is proposed.
"""

from __future__ import annotations

import re
from collections import defaultdict
from datetime import datetime, timedelta
from typing import Callable, Collection, Iterable, Mapping, Sequence

import numpy as np

from ..consolidation import MergeAnswer, MergeRequest, MergeSource, RuleMerger
from ..consolidation.clusters import clusters
from ..model import FactVersion, Kind, Status
from ..substrate.decisions import DecisionTrace
from ..temporal import iso
from ..texts import value_text
from .model import AGE_OUT, MERGE, PROCEDURE, RETIRE, Draft, DreamSettings, DreamTarget

TEXT_CLIP = 500
_FAILED = re.compile(
    r"\b(?:fail(?:s|ed|ing|ure)?|errors?|erred|broke|broken|regress(?:ed|ion)?|revert(?:ed)?|rolled back|"
    r"crash(?:ed)?|timed? ?out|did not work|didn'?t work|wrong)\b",
    re.IGNORECASE,
)


def clip(text: str, limit: int = TEXT_CLIP) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def fact_target(state: FactVersion) -> DreamTarget:
    return DreamTarget(state.kind.value, state.fact_id, state.key, state.id, clip(value_text(state.value)))


def failed(outcome: str | None) -> bool:
    """Does an outcome say the decision went wrong?"""
    return bool(outcome) and bool(_FAILED.search(outcome))


def merge_request(rows: Sequence[FactVersion]) -> MergeRequest:
    """What the offline rule merger summarises: the rows, oldest statement first."""
    return MergeRequest(
        tuple(MergeSource(r.fact_id, r.key, value_text(r.value), iso(r.valid_at) or "", r.subject) for r in rows)
    )


def merge_drafts(
    candidates: Sequence[FactVersion],
    vectors: np.ndarray,
    settings: DreamSettings,
    summary_key: Callable[[Sequence[FactVersion], MergeAnswer], str | None],
) -> list[Draft]:
    """One merge per cluster. ``candidates``: the mergeable rows, oldest first; ``vectors``
    their unit vectors; ``summary_key``: where the summary would go now (None: nowhere free)."""
    out = []
    for members in clusters(candidates, vectors, settings.merge):
        read = [candidates[i] for i in members]
        answer = RuleMerger().merge(merge_request(read))
        key = summary_key(read, answer)
        if key is None:
            continue
        seed = vectors[members[0]]
        cosine = min(float(vectors[i] @ seed) for i in members[1:])
        out.append(
            Draft(
                MERGE,
                tuple(fact_target(r) for r in read),
                {"op": "merge", "key": key, "text": answer.text, "retire": [r.fact_id for r in read]},
                f"{len(read)} live {read[0].memory_type} rows say nearly the same thing "
                f"(cosine {cosine:.2f} or more to the oldest): keep one summary, retire the rows behind it",
                round(max(0.0, min(1.0, cosine)), 3),
            )
        )
    return out


def _pair(a: str, b: str) -> tuple[str, str]:
    return (a, b) if a < b else (b, a)


def retire_drafts(states: Sequence[FactVersion], records: Iterable[Mapping], now: datetime) -> list[Draft]:
    """One retirement per flagged pair of live rows (``records``: the resolver's, oldest first)."""
    by_fact = {s.fact_id: s for s in states}
    pairs: set[tuple[str, str]] = set()
    for state in states:
        pairs.update(_pair(state.fact_id, f) for f in state.conflict_with if f in by_fact)
    latest: dict[tuple[str, str], Mapping] = {}
    for record in records:
        latest[_pair(record["judged_fact"], record["peer_fact"])] = record
    pairs.update(p for p, r in latest.items() if r["action"] == "flag" and p[0] in by_fact and p[1] in by_fact)
    out = []
    for pair in sorted(pairs):
        a, b = by_fact[pair[0]], by_fact[pair[1]]
        if any(s.pinned or s.locked or s.sensitivity == "high" or s.expired(now) for s in (a, b)):
            continue  # a person keeps pinned and locked rows; high ones are never quoted here
        older, newer = sorted((a, b), key=lambda s: (s.valid_at, s.created_at, s.fact_id))
        record = latest.get(pair)
        confidence = float(record["confidence"]) if record is not None else 0.6
        why = f"{older.key!r} is flagged against {newer.key!r}, which was stated later"
        if older.valid_at == newer.valid_at:
            confidence, why = (
                min(confidence, 0.5),
                f"{older.key!r} and {newer.key!r} are flagged, both valid from the same instant",
            )
        if record is not None:  # its verdict, not its reason: a model's reason may quote the values
            why += f" (the resolver judged {record['verdict']} at {float(record['confidence']):.2f})"
        out.append(
            Draft(
                RETIRE,
                (fact_target(older), fact_target(newer)),
                {"op": "retire", "retire": older.fact_id, "keep": newer.fact_id},
                why + ": retire the older statement, keep the newer",
                round(confidence, 3),
            )
        )
    return out


def age_out_drafts(
    states: Sequence[FactVersion],
    active: Collection[str],
    now: datetime,
    settings: DreamSettings,
    skip: Collection[str] = frozenset(),
) -> list[Draft]:
    """``active``: fact ids an event of the window names or a view surfaced in it; ``skip``:
    facts another draft of the pass already names."""
    threshold = timedelta(days=settings.stale_days)
    out = []
    for s in states:
        if s.fact_id in skip or s.fact_id in active or s.status not in (Status.ACTIVE, Status.PROPOSED):
            continue
        if s.pinned or s.locked or s.sensitivity == "high" or s.expires_at is not None or s.kind is Kind.DOCUMENT:
            continue
        idle = now - s.created_at
        if idle < threshold:
            continue
        over = (idle - threshold) / threshold
        out.append(
            Draft(
                AGE_OUT,
                (fact_target(s),),
                {"op": "age_out", "retire": s.fact_id},
                f"{s.key!r} was last written {idle.days} days ago (the limit is {settings.stale_days}) and was "
                f"not restated, changed or recalled in the last {settings.window_days} days: tombstone it "
                "(restore brings it back)",
                round(min(0.9, 0.5 + 0.4 * over), 3),
            )
        )
    return out


def procedure_drafts(
    traces: Sequence[DecisionTrace],
    head_of: Callable[[str], str | None],
    noted_at: Callable[[str], datetime | None],
    settings: DreamSettings,
    start: datetime,
    end: datetime,
) -> list[Draft]:
    """``traces``: the newest version of the namespace's decision traces with an outcome, less
    Dreams' own; ``head_of(key)``: the key's head row id (None: empty); ``noted_at(key)``: when
    an approved proposal wrote the live note there (None: it did not). Outcomes a Dreams note
    already summed up are its own output: only those recorded after the note count."""
    by_intent: dict[str, list[DecisionTrace]] = defaultdict(list)
    for trace in traces:
        if trace.intent and trace.outcome and start <= trace.recorded_at <= end:
            by_intent[trace.intent].append(trace)
    out = []
    for intent in sorted(by_intent):
        since = noted_at(f"procedure:{intent}")
        group = [t for t in by_intent[intent] if since is None or t.recorded_at > since]
        bad = [t for t in group if failed(t.outcome)]
        if len(bad) < settings.min_failures or 2 * len(bad) <= len(group):
            continue
        key = f"procedure:{intent}"
        quoted = "; ".join(f"{t.recorded_at:%Y-%m-%d}: {clip(t.outcome or '', 200)}" for t in bad[-5:])
        text = (
            f"Decisions taken under the intent '{intent}' failed {len(bad)} of {len(group)} times between "
            f"{start:%Y-%m-%d} and {end:%Y-%m-%d}. Recorded outcomes: {quoted}. Read them before acting under "
            f"'{intent}' again."
        )
        head = head_of(key)
        targets = tuple(
            DreamTarget("decision", t.decision_id, None, str(t.version), clip(f"{t.rationale} -> {t.outcome}"))
            for t in bad
        ) + (DreamTarget("key", key, key, head),)
        out.append(
            Draft(
                PROCEDURE,
                targets,
                {"op": "write_note", "key": key, "text": text, "memory_type": "procedure"},
                f"{len(bad)} of {len(group)} outcomes under '{intent}' in the window read as failures: "
                f"write a procedure note at {key!r}",
                round(len(bad) / len(group), 3),
            )
        )
    return out
