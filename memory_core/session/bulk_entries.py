"""A batch's entries before its commit: each checked on its own (the point write's phases, or the
fresh-key shortcut), then the first ``cap`` new facts judged against stored peers and earlier
entries of the batch, against the namespace as the batch has changed it so far (``Overlay``)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

import numpy as np

from ..errors import PinnedConflict
from ..identity import Namespace
from ..model import FactVersion
from ..timeline import StatementPlan
from ..values import content_sha256
from ..write import phases
from ..write.outcome import verdict_rows
from ..write.request import SetRequest, SetState
from ..write.tenant_config import resolve_threshold
from ..write.verdicts import Verdict
from .bulk_vectors import BatchVectors
from .point import PEER_READ_LIMIT

if TYPE_CHECKING:
    from .core import Session


class Overlay:
    """The namespace's key states as the batch has changed them so far (last writer wins)."""

    def __init__(self, session: Session, namespace: Namespace) -> None:
        self.versions, self.namespace = session.versions, namespace
        self.changed: dict[str, dict[str, FactVersion]] = {}

    def states(self, key: str) -> list[FactVersion]:
        base = {s.fact_id: s for s in self.versions.fact_states(self.namespace, key)}
        base.update(self.changed.get(key, {}))
        return sorted(base.values(), key=lambda s: s.version)

    def fact(self, key: str, fact_id: str) -> FactVersion | None:
        return self.changed.get(key, {}).get(fact_id) or self.versions.fact_state(self.namespace, key, fact_id)

    def record(self, rows: Sequence[FactVersion]) -> None:
        for row in rows:
            self.changed.setdefault(row.key, {})[row.fact_id] = row


def _unchanged(state: SetState) -> bool:
    """A restatement that names no new sensitivity, adds no pin, sets no ttl and names no other
    graph facts writes nothing."""
    if not state.restatement:
        return False
    r = state.request
    prior = next(s for s in state.states if s.fact_id == state.plan.restates)
    return (
        (r.sensitivity is None or r.sensitivity == prior.sensitivity)
        and (not r.pin or prior.pinned)
        and r.ttl_seconds is None
        and (not r.relations or r.relations == prior.relations)
    )


@dataclass(slots=True)
class Fresh:
    """An entry for a key the namespace has never held: no existing row to guard, restate or
    close, so it skips the request-state phases (the same checks run, on plain values)."""

    request: SetRequest
    config: Any
    memory_type: str
    type_config: Any
    content_sha256: str
    prepared: phases.Prepared
    on_expire: str
    rows: tuple[FactVersion, ...]
    verdict: Verdict | None = None
    peer_rows: tuple[FactVersion, ...] = ()
    plan: StatementPlan = StatementPlan(None, ())
    restatement: bool = False

    @property
    def sensitivity(self) -> str:
        return self.prepared.sensitivity

    @property
    def value_text(self) -> str:
        return self.prepared.text

    def as_state(self) -> SetState:
        p = self.prepared
        return SetState(
            self.request,
            self.config,
            self.memory_type,
            None,
            self.type_config,
            (),
            0,
            None,
            self.plan,
            p.expires_at,
            self.on_expire,
            self.content_sha256,
            p.text,
            p.sensitivity,
            p.source_class,
            self.request.now,
            self.rows,
        )


def fresh_parts(config, request: SetRequest, windows: dict[tuple, tuple]) -> tuple:
    """An entry for a new key, checked: (memory type, type config, prepared value, sha, on_expire).
    ``windows``: the type and expiry window a batch's entries share (one lookup per type)."""
    shared = (request.memory_type, request.on_expire, request.now) if request.ttl_seconds is None else None
    window = windows.get(shared) if shared is not None else None
    if window is None:
        memory_type = config.type(request.memory_type).retype_to or request.memory_type
        type_config = config.type(memory_type)
        window = (memory_type, type_config, *phases.expiry_window(request, type_config, config.tenant))
        if shared is not None:
            windows[shared] = window
    memory_type, type_config, expires_at, on_expire = window
    prepared = phases.check_value(request, config.tenant, expires_at)
    return memory_type, type_config, prepared, content_sha256(request.value_json), on_expire


def fresh_entry(
    session: Session,
    config,
    request: SetRequest,
    memory_type: str,
    type_config,
    prepared: phases.Prepared,
    sha: str,
    on_expire: str,
) -> Fresh:
    row = phases.new_fact_row(
        request, session.new_id(), memory_type, sha, 1, session.new_id(), request.now, on_expire, prepared
    )
    return Fresh(request, config, memory_type, type_config, sha, prepared, on_expire, (row,))


def through_phases(session: Session, config, request: SetRequest, overlay: Overlay) -> SetState:
    state = phases.resolve_type(SetState(request, config))
    state = phases.check_live(state, overlay.states(request.key))
    if _unchanged(state):
        return dataclasses.replace(state, rows=())
    return phases.build_rows(state, session.new_id)


def judge(
    session: Session, prepared: list[SetState | Fresh], vectors: BatchVectors, overlay: Overlay
) -> list[SetState | Fresh]:
    """Peer verdicts for the first ``cap`` new facts: stored peers and earlier entries of the batch."""
    checked = vectors.judged
    if not checked:
        return prepared
    namespace = prepared[0].request.namespace
    calibration = session.calibration(namespace.tenant)
    matrix = vectors.first[1]
    floors = [resolve_threshold(prepared[i].type_config, prepared[i].config.tenant, calibration).value for i in checked]
    stored = session.peers.nearest(namespace, matrix, min(floors), PEER_READ_LIMIT)
    intra = matrix @ matrix.T
    out = list(prepared)
    for n, i in enumerate(checked):
        state = out[i].as_state() if isinstance(out[i], Fresh) else out[i]
        found = [phases.peer_of(overlay.fact(key, fact_id), state, cosine) for fact_id, key, cosine in stored[n]]
        for m in np.nonzero(intra[n, :n] >= floors[n])[0]:  # earlier entries of the batch, as they stand now
            earlier = out[checked[m]]
            if earlier.rows and earlier.request.key != state.request.key:
                fact = overlay.fact(earlier.request.key, earlier.rows[-1].fact_id)
                found.append(phases.peer_of(fact, state, float(intra[n, m])))
        peers = [p for p in found if p is not None]
        try:
            state = phases.peer_verdict(state, peers, calibration)
        except PinnedConflict:
            out[i] = dataclasses.replace(state, verdict=Verdict("rejected"), rows=())
            continue
        state = _bulk_verdict_rows(session, state, overlay)
        overlay.record((*state.rows, *state.peer_rows))
        out[i] = state
    return out


def _bulk_verdict_rows(session: Session, state: SetState, overlay: Overlay) -> SetState:
    """verdict_rows against the batch as it stands: a peer may be an earlier entry of this batch."""

    def head_version(key: str) -> int:
        return max((s.version for s in overlay.states(key)), default=0)

    return verdict_rows(state, overlay.fact, head_version, session.new_id)


def renumber(session: Session, namespace: Namespace, rows: list[FactVersion]) -> list[FactVersion]:
    """Give each key's rows consecutive versions above its stored head, in batch order."""
    out, next_version = [], {}
    for row in rows:
        if row.key not in next_version:
            next_version[row.key] = session.head_version(namespace, row.key) + 1
        out.append(
            row if row.version == next_version[row.key] else dataclasses.replace(row, version=next_version[row.key])
        )
        next_version[row.key] += 1
    return out
