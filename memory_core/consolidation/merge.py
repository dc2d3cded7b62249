"""Mergers: what writes a cluster's summary. ``RuleMerger`` is the offline default, as the rule
extractor is for extraction: it keeps every distinct statement, oldest first, and invents
nothing. A language model's merger (``adapters.llm.merger``) rewrites the cluster as one text."""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from typing import Protocol

from ..extraction.coref import STOP
from .model import MergeAnswer, MergeRequest

_WORD = re.compile(r"[A-Za-z][A-Za-z-]{2,}")
_POSSESSIVE = re.compile(r"['’]s\b")
MAX_KEY = 200


class Merger(Protocol):
    name: str

    def merge(self, request: MergeRequest) -> MergeAnswer:
        """One summary of the request's sources, and the key it should be kept at."""
        ...


def _sentence(text: str) -> str:
    text = " ".join(text.split())
    return text if text[-1:] in ".!?" else text + "."


class RuleMerger:
    """Every distinct statement of the cluster, oldest first; one that another contains is left
    out. The key names the words the sources share most (``consolidated:<words>``)."""

    name = "rules"

    def merge(self, request: MergeRequest) -> MergeAnswer:
        texts: list[str] = []
        for source in request.sources:
            text = _sentence(source.text)
            folded = text.casefold().rstrip(".!?")
            if any(folded in kept.casefold() for kept in texts):
                continue
            texts = [t for t in texts if t.casefold().rstrip(".!?") not in folded]
            texts.append(text)
        return MergeAnswer(consolidated_key(request), " ".join(texts))


def consolidated_key(request: MergeRequest) -> str:
    """``consolidated:`` and the three content words most sources share (ties by first use)."""
    counts: Counter[str] = Counter()
    first: dict[str, int] = {}
    for source in request.sources:
        for word in dict.fromkeys(w.casefold() for w in _WORD.findall(_POSSESSIVE.sub("", source.text))):
            if word not in STOP:
                counts[word] += 1
                first.setdefault(word, len(first))
    words = sorted(counts, key=lambda w: (-counts[w], first[w]))[:3]
    if not words:
        digest = hashlib.sha256("\0".join(s.fact_id for s in request.sources).encode()).hexdigest()[:8]
        words = [digest]
    return "consolidated:" + "-".join(words)
