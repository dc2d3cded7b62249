"""The graph-expansion leg's pure parts: which entities a query names, and how the rows that
state triples about them (hop 1) or about their neighbours (hop 2) score on the leg.

A query names an entity when one of its runs of one to three words, folded as entity names are
(``graph.model.entity_id``), is an entity of the scope's graph. The service reads the current
triples of those entities and of the entities they reach, and the index rows of the facts that
state them are the leg's candidates (docs/retrieval.md, "The graph leg").
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping, Sequence

from ..graph.model import DOCUMENTED_IN, OWNER_ENTITY, entity_id

MAX_NGRAM = 3
MAX_GRAPH_FACTS = 64  # rows the leg brings, nearest hop first
HOP_SCORES = {1: 1.0, 2: 0.5}  # the leg's score of a row stating a triple at that hop
_WORD = re.compile(r"[\w][\w'’.&-]*[\w]|[\w]")
_POSSESSIVE = re.compile(r"['’]s$", re.I)  # "Ana's job" names ana
# Words that are never an entity alone (a graph may hold "user", the profile's owner: a query's
# "I" or "me" is not taken for it, which would make every first-person question a graph query).
_NOT_ALONE = frozenset(
    "a an the i me my we you he she it they them of in on at to for with and or is are was were be "
    "do does did what who whom which where when why how".split()
)


def named_entities(query: str, entities: frozenset[str]) -> list[str]:
    """The entities of ``entities`` that the query names, longest runs first, each once."""
    if not entities:
        return []
    words = [_POSSESSIVE.sub("", w) for w in _WORD.findall(query)]
    found: dict[str, None] = {}
    for size in range(MAX_NGRAM, 0, -1):
        for start in range(len(words) - size + 1):
            run = words[start : start + size]
            if size == 1 and run[0].lower() in _NOT_ALONE:
                continue
            name = entity_id(" ".join(run))
            if name in entities and name != OWNER_ENTITY:  # "I", "myself", "the user": not a graph query
                found.setdefault(name)
    return list(found)


Triple = tuple[str, str, str]  # (subject, relation, object), as stored


def neighbours(named: Sequence[str], triples: Iterable[Triple]) -> list[str]:
    """The entities one hop from ``named`` (a document chunk is a leaf, not an entity)."""
    start = set(named)
    reached: dict[str, None] = {}
    for subject, relation, obj in triples:
        if relation == DOCUMENTED_IN:
            continue
        for a, b in ((subject, obj), (obj, subject)):
            if a in start and b not in start:
                reached.setdefault(b)
    return list(reached)


def leg_facts(by_hop: Mapping[int, Sequence[str]]) -> dict[str, float]:
    """fact id -> the leg's score: a fact's nearest hop decides, at most ``MAX_GRAPH_FACTS``."""
    scores: dict[str, float] = {}
    for hop in sorted(by_hop):
        for fact_id in by_hop[hop]:
            if fact_id not in scores and len(scores) < MAX_GRAPH_FACTS:
                scores[fact_id] = HOP_SCORES.get(hop, 0.0)
    return scores
