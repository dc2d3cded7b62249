"""Belief sources: the evidence links from a fact to what supports it, each with a support type.

One shape for every writer of ``belief_sources``: extraction links each fact it writes to the
turn it was read from (the turn's evidence row) and to the verbatim window that holds that turn
(the chunk row); consolidation links a summary to the rows it merged; reflect a claim's fact to
its source; a cross-scope promote a copy to its original. Pure: the service reads the rows and
keeps the links through the store.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Mapping, Sequence

from ..model import FactVersion
from ..temporal import iso

# The support types (``support_type``): how the source supports the fact.
EXTRACTED_FROM = "extracted_from"  # the turn (evidence row) an extractor read the fact from
QUOTED_IN = "quoted_in"  # the verbatim window (chunk row) that holds that turn
DERIVED_FROM = "derived_from"  # a consolidation summary and each row it merged
REFLECTED_FROM = "reflected_from"  # a reflect claim's fact and the row it was read from
PROMOTED_FROM = "promoted_from"  # a copy in a shared scope and the row it was copied from
SUPPORT_TYPES = (EXTRACTED_FROM, QUOTED_IN, DERIVED_FROM, REFLECTED_FROM, PROMOTED_FROM)


@dataclass(frozen=True, slots=True)
class BeliefSource:
    """One evidence link: ``fact_id`` (at ``key``) is supported by ``source_fact`` (at
    ``source_key``), both rows of the namespace, recorded by the run ``run_id``."""

    tenant: str
    scope: str
    owner_id: str
    fact_id: str
    key: str
    source_fact: str
    source_key: str
    support_type: str
    run_id: str
    recorded_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {
            "fact_id": self.fact_id,
            "key": self.key,
            "source_fact": self.source_fact,
            "source_key": self.source_key,
            "support_type": self.support_type,
            "run_id": self.run_id,
            "recorded_at": iso(self.recorded_at),
        }


def extraction_links(
    facts: Sequence[FactVersion],
    evidence: Mapping[str, FactVersion],
    chunks: Mapping[str, Sequence[FactVersion]],
    run_id: str,
    at: datetime,
) -> list[BeliefSource]:
    """The links of the facts one extraction wrote: each fact to the evidence row of the turn it
    was read from (``extracted_from``) and to each chunk row holding that turn (``quoted_in``).
    ``evidence`` and ``chunks`` are keyed by turn id; a fact with no source turn, or whose turn
    kept no row (a tool turn, an empty one), links to nothing."""
    out: list[BeliefSource] = []
    for fact in facts:
        turn = fact.provenance.source_turn
        if turn is None:
            continue
        sources = [(EXTRACTED_FROM, evidence[turn])] if turn in evidence else []
        sources += [(QUOTED_IN, chunk) for chunk in chunks.get(turn, ())]
        for support, source in sources:
            if source.fact_id == fact.fact_id:
                continue
            out.append(
                BeliefSource(
                    fact.tenant,
                    fact.scope.value,
                    fact.owner_id,
                    fact.fact_id,
                    fact.key,
                    source.fact_id,
                    source.key,
                    support,
                    run_id,
                    at,
                )
            )
    return out
