"""Reading the state-change stream with a cursor: the events of the scopes a call reads, after
``since``, of the types asked for; through lenses, only the events a worn lens watches and
admits. An event stores hashes; the values before and after are read from the version rows, and
shown only where the caller (through its lenses, when it wears any) may read that row: through
lenses, a fact of the write that no worn lens admits is left out of the event altogether."""

from __future__ import annotations

from typing import Iterable, Sequence

from ..identity import Namespace, Scope
from ..inputs import integer, texts
from ..model import FactVersion
from ..session import RunService
from ..session.substrate import read_scopes, wear
from ..substrate.answers import EventPage, EventView, FactDiff
from ..substrate.events import StateChange
from ..substrate.lenses import Capability, Lens, Worn, admits_row, watches

MAX_EVENTS = 1000


def _sees(lens: Lens, event: StateChange) -> bool:
    return watches(lens, event.event_type) and admits_row(
        lens,
        scope=Scope(event.scope),
        entity_type=event.memory_type,
        lens_id=event.lens_id,
        sensitivity=event.sensitivity,
    )


def _row_visible(lenses: Sequence[Lens], row: FactVersion) -> bool:
    return any(
        admits_row(
            lens,
            scope=row.scope,
            entity_type=row.memory_type,
            lens_id=row.provenance.lens_id,
            sensitivity=row.sensitivity,
        )
        for lens in lenses
    )


class EventsService(RunService):
    def events(
        self,
        since: int,
        types: Sequence[str] | None,
        lenses: Sequence[str] | None,
        scopes: Iterable[str] | None,
        limit: int,
    ) -> EventPage:
        since = integer(since, "since", low=0, high=2**62)
        limit = integer(limit, "limit", low=1, high=MAX_EVENTS)
        wanted = texts(types, "types") if types is not None else ()
        worn: Worn | None = wear(self.session, self.identity, lenses, Capability.READ) if lenses else None
        read = read_scopes(self.identity, worn, scopes)
        namespaces: list[Namespace] = [self.identity.namespace(s) for s in read]
        raw = self.session.store.substrate.events(namespaces, since, limit, wanted)
        shown = []
        for event in raw:
            seeing = [lens for lens in worn.lenses if _sees(lens, event)] if worn is not None else None
            if seeing is not None and not seeing:
                continue
            shown.append((event, seeing))
        rows = self._rows(e for e, _ in shown)
        views = tuple(self._view(event, seeing, rows) for event, seeing in shown)
        next_since = raw[-1].seq if raw else since
        return EventPage(views, next_since, worn.ids if worn is not None else ())

    def _rows(self, events: Iterable[StateChange]) -> dict[str, FactVersion]:
        ids = {i for e in events for f in e.facts for i in (f.before_version_id, f.after_version_id) if i}
        return {r.id: r for r in self.session.versions.version_rows(sorted(ids))}

    @staticmethod
    def _view(event: StateChange, seeing: list[Lens] | None, rows: dict[str, FactVersion]) -> EventView:
        facts = []
        for f in event.facts:
            before, after = rows.get(f.before_version_id or ""), rows.get(f.after_version_id)
            withheld = None
            if seeing is not None:
                if after is None or not _row_visible(seeing, after):
                    continue  # a fact of the write the lenses do not admit (a flagged peer): not even its key
                if before is not None and not _row_visible(seeing, before):
                    withheld = "lens"  # admitted now, not before (its sensitivity was lowered)
            facts.append(
                FactDiff(
                    fact_id=f.fact_id,
                    key=f.key,
                    before_version_id=f.before_version_id,
                    after_version_id=f.after_version_id,
                    changes={c.field: [c.before, c.after] for c in f.changes},
                    value_before=before.value if before is not None and withheld is None else None,
                    value_after=after.value if after is not None else None,
                    withheld=withheld,
                )
            )
        return EventView(
            seq=event.seq,
            event_id=event.event_id,
            event_type=event.event_type,
            scope=event.scope,
            key=event.key,
            entity=event.entity,
            memory_type=event.memory_type,
            actor=event.actor,
            actor_chain=event.actor_chain,
            lens_id=event.lens_id,
            frame_id=event.frame_id,
            facts=tuple(facts),
            evidence=event.evidence,
            summary=dict(event.summary),
            recorded_at=event.recorded_at,
        )
