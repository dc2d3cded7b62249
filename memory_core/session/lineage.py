"""The evidence links extraction keeps for the facts it writes (``belief_sources``): each fact to
the evidence row of the turn it was read from and to the verbatim windows holding that turn. Read
after the bulk write, through the store's lineage port (``services.lineage`` reads them back)."""

from __future__ import annotations

from ..extraction.lineage import extraction_links
from ..extraction.model import slug
from ..extraction.pipeline import ExtractionState
from ..extraction.summaries import EVIDENCE_TYPE
from ..identity import Namespace
from ..model import VISIBLE_STATUSES, FactVersion
from .core import Session

DERIVED_TYPES = frozenset({EVIDENCE_TYPE, "transcript_chunk"})  # extraction's own rows, not facts read


def _live(states: list[FactVersion]) -> FactVersion | None:
    return next((s for s in states if s.status.value in VISIBLE_STATUSES), None)


def record_extraction_links(session: Session, namespace: Namespace, state: ExtractionState) -> None:
    """Link each fact one extraction wrote to its turn's evidence row and the windows holding that
    turn. A turn's row the batch left unchanged (the same words again) is read as it stands."""
    written = tuple(state.written.written) if state.written else ()
    facts = [r for r in written if r.memory_type not in DERIVED_TYPES and not r.key.startswith(("evidence:", "chunk:"))]
    if not facts:
        return
    by_key = {r.key: r for r in written}
    versions, name = session.versions, slug(state.session)

    def row(key: str) -> FactVersion | None:
        return by_key.get(key) or _live(versions.fact_states(namespace, key))

    evidence: dict[str, FactVersion] = {}
    for turn in state.turns:  # the key bulk_write gives a turn's evidence row
        found = row(f"evidence:{name}:{turn.index:04d}")
        if found is not None:
            evidence[turn.turn_id] = found
    chunks: dict[str, list[FactVersion]] = {}
    for n, (first, last) in enumerate(state.windows):  # and a window's chunk row
        found = row(f"chunk:{name}:{n:04d}")
        for turn in state.turns[first : last + 1] if found is not None else ():
            chunks.setdefault(turn.turn_id, []).append(found)  # type: ignore[arg-type]
    links = extraction_links(facts, evidence, chunks, session.new_id(), session.clock.now())
    session.store.lineage.record_sources(links)
