"""A deterministic synthetic "timeline" corpus: subjects whose facts change over time.

Each subject moves house, changes jobs, takes courses of medication with start and end dates,
holds a contract with a known end in the future, and suffers the odd wrong statement that a
later one corrects. Because the corpus is built from a known truth, every answer is known by
construction: ``probes`` say what ``get(key, as_of=...)`` must return.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterable

from memory_core import Identity, Memory

CITIES = ["Lisbon", "Berlin", "Osaka", "Toronto", "Nairobi", "Lima", "Oslo", "Hanoi", "Austin", "Porto"]
EMPLOYERS = ["Initech", "Globex", "Umbrella Labs", "Hooli", "Stark Freight", "Wayne Bakery", "Acme Robotics"]
MEDICATIONS = ["ibuprofen", "amoxicillin", "metformin", "loratadine", "omeprazole", "sertraline"]
CONTRACTS = ["phone plan", "apartment lease", "gym membership", "car insurance"]

# All dates hang off a fixed anchor so the corpus never depends on the day it is built.
ANCHOR = datetime(2026, 1, 1, tzinfo=timezone.utc)
DAY = timedelta(days=1)


@dataclass(frozen=True, slots=True)
class TimelineEvent:
    """One statement, in the order a subject would have said it."""

    subject: str
    key: str
    value: Any
    valid_at: datetime
    invalid_at: datetime | None
    observed_at: datetime
    event: str  # move | job | medication | contract | mistake | correction


@dataclass(frozen=True, slots=True)
class Probe:
    """What must be live under ``key`` at ``as_of`` (``None``: nothing)."""

    subject: str
    key: str
    as_of: datetime
    expected: Any


@dataclass(frozen=True, slots=True)
class TimelineCorpus:
    seed: int
    events: tuple[TimelineEvent, ...]
    probes: tuple[Probe, ...]
    subjects: tuple[str, ...] = field(default=())

    @property
    def fingerprint(self) -> str:
        payload = json.dumps([asdict(e) for e in self.events], default=str, sort_keys=True)
        return hashlib.sha256(payload.encode()).hexdigest()[:16]


def _segments(rng: random.Random, start: datetime, end: datetime, values: list[str], changes: int):
    """Consecutive open-ended values: each change starts where the last one stops."""
    cut_days = sorted(rng.sample(range(30, (end - start).days - 30), changes))
    starts = [start] + [start + d * DAY for d in cut_days]
    picks = rng.sample(values, changes + 1)
    return list(zip(picks, starts))


def generate_timeline(seed: int = 7, subjects: int = 40) -> TimelineCorpus:
    """Build the corpus. The same ``seed`` and ``subjects`` always give the same corpus."""
    rng = random.Random(seed)
    history_start, history_end = ANCHOR - 3 * 365 * DAY, ANCHOR
    events: list[TimelineEvent] = []
    truth: dict[tuple[str, str], list[tuple[Any, datetime, datetime | None]]] = {}
    names = tuple(f"subject-{i:03d}" for i in range(subjects))

    def said(start: datetime) -> datetime:
        return start + rng.randint(0, 20) * timedelta(hours=1)

    for name in names:
        for key, pool, event in (("city", CITIES, "move"), ("employer", EMPLOYERS, "job")):
            segments = _segments(rng, history_start, history_end, pool, rng.randint(1, 3))
            truth[(name, key)] = [(v, s, None) for v, s in segments]
            for value, start in segments:
                events.append(TimelineEvent(name, key, value, start, None, said(start), event))
            last_said = events[-1].observed_at
        # Courses of medication: closed intervals with gaps between them.
        cursor, courses = history_start + rng.randint(10, 90) * DAY, []
        for med in rng.sample(MEDICATIONS, rng.randint(1, 3)):
            end = cursor + rng.randint(7, 120) * DAY
            courses.append((med, cursor, end))
            events.append(TimelineEvent(name, "medication", med, cursor, end, said(cursor), "medication"))
            cursor = end + rng.randint(20, 200) * DAY
        truth[(name, "medication")] = courses
        # A contract signed in the past whose end is known and still ahead.
        signed = history_end - rng.randint(30, 400) * DAY
        ends = history_end + rng.randint(400, 900) * DAY
        contract = rng.choice(CONTRACTS)
        truth[(name, "contract")] = [(contract, signed, ends)]
        events.append(TimelineEvent(name, "contract", contract, signed, ends, said(signed), "contract"))
        # Sometimes a wrong employer is stated and corrected later for the same start.
        if rng.random() < 0.4:
            value, start, _ = truth[(name, "employer")][-1]
            wrong = rng.choice([e for e in EMPLOYERS if e != value])
            told = last_said + timedelta(minutes=30)  # after the true statement, so it overrides it
            events.append(TimelineEvent(name, "employer", wrong, start, None, told, "mistake"))
            events.append(TimelineEvent(name, "employer", value, start, None, told + 7 * DAY, "correction"))

    events.sort(key=lambda e: (e.observed_at, e.subject, e.key))
    probes = tuple(_probes(rng, truth))
    return TimelineCorpus(seed=seed, events=tuple(events), probes=probes, subjects=names)


def _probes(rng: random.Random, truth: dict) -> Iterable[Probe]:
    for (subject, key), segments in sorted(truth.items()):
        ordered = sorted(segments, key=lambda s: s[1])
        for i, (value, start, end) in enumerate(ordered):
            stop = end or (ordered[i + 1][1] if i + 1 < len(ordered) else ANCHOR + 1000 * DAY)
            middle = start + (stop - start) / 2
            yield Probe(subject, key, middle, value)
            yield Probe(subject, key, start, value)
            if end is not None:
                gap_ends = ordered[i + 1][1] if i + 1 < len(ordered) else None
                yield Probe(subject, key, end, None if gap_ends != end else ordered[i + 1][0])
        yield Probe(subject, key, ordered[0][1] - DAY, None)


@dataclass(frozen=True, slots=True)
class LoadReport:
    tenant: str
    fingerprint: str
    events: int
    loaded: bool  # False when this corpus was already in the home
    verdicts: dict[str, int]


def load_timeline(
    memory: Memory,
    corpus: TimelineCorpus,
    *,
    tenant: str,
    run: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> LoadReport:
    """Write the corpus through the Memory tool, one run identity per subject. Idempotent per corpus."""
    marker = f"corpus:timeline:{tenant}:{corpus.fingerprint}"
    if memory.store.inspection.marker(marker) is not None:
        return LoadReport(tenant, corpus.fingerprint, len(corpus.events), False, {})
    tools = {
        s: memory.for_run(
            Identity(tenant=tenant, user=s, agent="timeline-loader", session=f"timeline-seed-{corpus.seed}", run=run),
            origin="corpora.timeline",
        )
        for s in corpus.subjects
    }
    verdicts: dict[str, int] = {}
    for n, e in enumerate(corpus.events, start=1):
        result = tools[e.subject].set(
            e.key, e.value, valid_at=e.valid_at, invalid_at=e.invalid_at, observed_at=e.observed_at, memory_type=e.event
        )
        verdicts[result.verdict] = verdicts.get(result.verdict, 0) + 1
        if progress and (n % 200 == 0 or n == len(corpus.events)):
            progress(n, len(corpus.events))
    memory.store.inspection.set_marker(marker, memory.clock.now().isoformat())
    return LoadReport(tenant, corpus.fingerprint, len(corpus.events), True, verdicts)


def check_probes(memory: Memory, corpus: TimelineCorpus, *, tenant: str) -> tuple[int, list[Probe]]:
    """Ask every probe through ``get(as_of=...)``; return (number right, the probes answered wrongly)."""
    wrong: list[Probe] = []
    for p in corpus.probes:
        fact = memory.for_run(Identity(tenant=tenant, user=p.subject)).get(p.key, as_of=p.as_of)
        if (fact.value if fact else None) != p.expected:
            wrong.append(p)
    return len(corpus.probes) - len(wrong), wrong
