"""Labelled statement pairs for calibrating the conflict resolver, labelled by construction.

From the synthetic timeline corpus (statements rendered in varied wordings):

* **update**: two successive values of a single-valued attribute of one subject (a move, a new job);
* **contradiction**: a wrong value and its correction, both dated to the same day;
* **compatible**: two attributes of one subject (where she lives, where she works), or two
  medications taken over the same time.

From LoCoMo's observations (when the file is there): two observations of one speaker in one
session, which the annotators wrote as separate facts: **compatible**.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from corpora.timeline import generate_timeline

NAMES = ["Maya", "Tomas", "Ana", "Omar", "Lena", "Kenji", "Priya", "Diego", "Sara", "Ivan", "Noor", "Felix"]
TEMPLATES = {
    "city": ["{s} lives in {v}", "{s} moved to {v}", "{s} is based in {v}", "{s}'s home is in {v}"],
    "employer": ["{s} works at {v}", "{s} has a job at {v}", "{s} is employed by {v}", "{s} works for {v}"],
    "medication": ["{s} takes {v}", "{s} was prescribed {v}", "{s} is on {v}"],
    "contract": ["{s} has a {v}", "{s} signed up for a {v}"],
}


@dataclass(frozen=True, slots=True)
class LabelledPair:
    source: str  # timeline | locomo
    label: str  # update | contradiction | compatible
    new: str  # the judged statement (the later one)
    peer: str
    new_date: str
    peer_date: str


def _say(rng: random.Random, subject: str, key: str, value: str) -> str:
    return rng.choice(TEMPLATES[key]).format(s=subject, v=value)


def timeline_pairs(seed: int = 7, subjects: int = 40) -> list[LabelledPair]:
    rng = random.Random(seed)
    corpus = generate_timeline(seed=seed, subjects=subjects)
    names = {s: f"{NAMES[i % len(NAMES)]} {chr(65 + i // len(NAMES))}." for i, s in enumerate(sorted(corpus.subjects))}
    out: list[LabelledPair] = []
    last: dict[tuple[str, str], tuple] = {}
    mistakes: dict[tuple[str, str], tuple] = {}
    current: dict[tuple[str, str], tuple] = {}
    for e in sorted(corpus.events, key=lambda e: e.observed_at):
        who = names[e.subject]
        said = (_say(rng, who, e.key, str(e.value)), e.valid_at.date().isoformat())
        slot = (e.subject, e.key)
        if e.event in ("move", "job") and slot in last:
            out.append(LabelledPair("timeline", "update", said[0], last[slot][0], said[1], last[slot][1]))
        if e.event == "mistake":
            mistakes[slot] = said
        if e.event == "correction" and slot in mistakes:
            out.append(LabelledPair("timeline", "contradiction", said[0], mistakes.pop(slot)[0], said[1], said[1]))
        if e.event == "medication":
            for (subject, key), earlier in current.items():
                if subject == e.subject and key == "medication" and earlier[0] != said[0]:
                    out.append(LabelledPair("timeline", "compatible", said[0], earlier[0], said[1], earlier[1]))
                    break
        for other in ("city", "employer"):
            if other != e.key and (e.subject, other) in current and e.event in ("move", "job"):
                earlier = current[(e.subject, other)]
                out.append(LabelledPair("timeline", "compatible", said[0], earlier[0], said[1], earlier[1]))
        if e.event in ("move", "job", "correction"):
            last[slot] = said
        current[slot] = said
    return out


def locomo_pairs(path: Path, *, per_session: int = 2, seed: int = 3) -> list[LabelledPair]:
    from corpora.locomo import load_observations

    rng = random.Random(seed)
    by_session: dict[tuple, list] = {}
    for o in load_observations(path):
        by_session.setdefault((o.sample_id, o.session, o.speaker), []).append(o)
    out = []
    for group in by_session.values():
        if len(group) < 2:
            continue
        for _ in range(per_session):
            a, b = rng.sample(group, 2)
            out.append(LabelledPair("locomo", "compatible", a.text, b.text, "", ""))
    return out
