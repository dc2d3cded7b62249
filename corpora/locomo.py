"""LoCoMo loader (Maharana et al., ACL 2024; CC BY-NC 4.0).

Reads the JSON list of samples from ``../shared/corpora/locomo`` or a path the user gives; never
copies it. Cleans the known defects of the evidence field and counts what it had to drop.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

DEFAULT_FILE = "locomo_dev.json"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
LICENCE = "CC BY-NC 4.0 (non-commercial, attribution): Maharana et al., ACL 2024, snap-research/LoCoMo"
# The dev file's conversations (the public release's sample ids): the pipeline's partition keys,
# known without reading the file, so that they exist (and say they are skipped) when it is absent.
DEV_SAMPLE_IDS = ("conv-26", "conv-30", "conv-41", "conv-42", "conv-43", "conv-44", "conv-47", "conv-48")

_SESSION_KEY = re.compile(r"^session_(\d+)$")
_EVIDENCE_TOKEN = re.compile(r"^D:?(\d+):0*(\d+)$")


class LocomoNotFound(FileNotFoundError):
    pass


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    caption: str | None
    session_date: datetime | None


@dataclass(frozen=True, slots=True)
class Question:
    question: str
    category: int
    evidence: tuple[str, ...]
    answer: Any


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    speakers: tuple[str, str]
    turns: tuple[Turn, ...]
    questions: tuple[Question, ...]


@dataclass
class CleaningReport:
    evidence_tokens: int = 0
    repaired_tokens: int = 0
    dropped_tokens: list[str] = field(default_factory=list)
    questions_without_evidence: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "evidence_tokens": self.evidence_tokens,
            "repaired_tokens": self.repaired_tokens,
            "dropped_tokens": len(self.dropped_tokens),
            "dropped_examples": self.dropped_tokens[:10],
            "questions_without_evidence": self.questions_without_evidence,
        }


def parse_session_date(text: str | None) -> datetime | None:
    """'1:56 pm on 8 May, 2023' → an aware UTC datetime (the corpus gives no zone)."""
    if not text:
        return None
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def clean_evidence(raw: list[str], known: set[str], report: CleaningReport) -> tuple[str, ...]:
    """Split joined ids ("D8:6; D9:17"), repair "D:11:26" and "D30:05", drop what does not exist."""
    out: list[str] = []
    for item in raw:
        for token in re.split(r"[;,\s]+", str(item).strip()):
            if not token:
                continue
            report.evidence_tokens += 1
            match = _EVIDENCE_TOKEN.match(token)
            dia_id = f"D{match.group(1)}:{match.group(2)}" if match else None
            if dia_id is not None and dia_id != token:
                report.repaired_tokens += 1
            if dia_id is None or dia_id not in known:
                report.dropped_tokens.append(token)
                continue
            if dia_id not in out:
                out.append(dia_id)
    return tuple(out)


def locate(path: str | Path | None, shared_root: Path) -> Path:
    candidate = Path(path) if path else shared_root / "corpora" / "locomo" / DEFAULT_FILE
    if candidate.is_dir():
        candidate = candidate / DEFAULT_FILE
    if not candidate.exists():
        raise LocomoNotFound(
            f"LoCoMo data not found at {candidate}; point `memcore eval locomo|observations --data`, the "
            "asset's `data` config, or MEMCORE_SHARED (the folder holding corpora/) at it"
        )
    return candidate


def load_locomo(path: Path) -> tuple[list[Conversation], CleaningReport]:
    samples = json.loads(Path(path).read_text())
    report = CleaningReport()
    conversations = []
    for sample in samples:
        conv = sample["conversation"]
        turns: list[Turn] = []
        sessions = sorted(int(m.group(1)) for key in conv if (m := _SESSION_KEY.match(key)))
        for n in sessions:
            date = parse_session_date(conv.get(f"session_{n}_date_time"))
            for t in conv.get(f"session_{n}") or []:
                turns.append(Turn(t["dia_id"], n, t["speaker"], t.get("text", ""), t.get("blip_caption"), date))
        known = {t.dia_id for t in turns}
        questions = []
        for qa in sample["qa"]:
            evidence = clean_evidence(qa.get("evidence") or [], known, report)
            if not evidence:
                report.questions_without_evidence += 1
            questions.append(
                Question(qa["question"], int(qa["category"]), evidence, qa.get("answer", qa.get("adversarial_answer")))
            )
        conversations.append(
            Conversation(sample["sample_id"], (conv["speaker_a"], conv["speaker_b"]), tuple(turns), tuple(questions))
        )
    return conversations, report


@dataclass(frozen=True, slots=True)
class Observation:
    """One of the corpus's ``observation`` facts: what a session established about a speaker."""

    sample_id: str
    session: int
    speaker: str
    text: str
    dia_id: str | None


def load_observations(path: Path) -> list[Observation]:
    """Every observation of every session (``session_N_observation`` → {speaker: [[text, dia_id], ...]})."""
    out = []
    for sample in json.loads(Path(path).read_text()):
        for key, by_speaker in sorted((sample.get("observation") or {}).items()):
            m = re.match(r"session_(\d+)_observation$", key)
            if not m or not isinstance(by_speaker, dict):
                continue
            for speaker, facts in by_speaker.items():
                for fact in facts or []:
                    text, dia_id = (
                        (fact[0], fact[1] if len(fact) > 1 else None) if isinstance(fact, list) else (str(fact), None)
                    )
                    if isinstance(text, str) and text.strip():
                        out.append(
                            Observation(
                                sample["sample_id"],
                                int(m.group(1)),
                                speaker,
                                text.strip(),
                                dia_id if isinstance(dia_id, str) else None,
                            )
                        )
    return out


def session_messages(conversation: Conversation) -> list[tuple[int, datetime | None, list[dict[str, Any]]]]:
    """Each session as (number, date, messages in the shape ``set_from_messages`` takes): both
    speakers are users, told apart by name; each turn keeps its dia_id as the message id."""
    sessions: dict[int, list[Turn]] = {}
    for turn in conversation.turns:
        sessions.setdefault(turn.session, []).append(turn)
    return [
        (
            number,
            turns[0].session_date,
            [{"role": "user", "content": t.text, "name": t.speaker, "id": t.dia_id} for t in turns],
        )
        for number, turns in sorted(sessions.items())
    ]


def conversation_fingerprint(conversation: Conversation) -> str:
    """Of the turns only (what extraction reads)."""
    payload = json.dumps(
        [conversation.sample_id, [(t.dia_id, t.speaker, t.text, str(t.session_date)) for t in conversation.turns]]
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]
