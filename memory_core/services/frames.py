"""Frames: open one for a task, update its next steps, tags and suppressions, close it; read one
(with its footprint and what was surfaced to it, and its history) or list one's own. A frame
belongs to the consumer that opened it; only that consumer works under it."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..errors import InvalidInput
from ..inputs import text, texts
from ..session import RunService
from ..session.substrate import RecordWrite, commit_records, consumer_of, own_namespace, owned_frame, wear
from ..substrate.events import EventContext
from ..substrate.frames import Frame, closed, opened, updated
from ..substrate.lenses import Capability

FRAME_TYPE = "frame"


class FrameService(RunService):
    def _commit(self, frame: Frame, op: str, event_type: str) -> None:
        ns = own_namespace(self.identity)
        write = RecordWrite(
            ns,
            f"frame:{frame.frame_id}",
            op,
            event_type,
            FRAME_TYPE,
            (frame,),
            context=EventContext(frame_id=frame.frame_id),
            summary={"version": frame.version, "status": frame.status, "intent": frame.intent},
        )
        commit_records(self.session, self.identity.actor, [write])

    def open(self, intent: str, goal: str, tags: Any, next_steps: Any, lenses: Sequence[str] | None) -> Frame:
        worn = wear(self.session, self.identity, list(texts(lenses, "lenses")), Capability.READ) if lenses else None
        ns = own_namespace(self.identity)
        frame = opened(
            self.session.new_id(),
            self.identity.tenant,
            consumer_of(self.identity),
            (ns.scope.value, ns.owner_id),
            intent,
            goal,
            tags,
            worn.ids if worn is not None else (),
            next_steps,
            self.session.clock.now(),
        )
        with self.session.locked():
            self._commit(frame, "frame_open", "frame.opened")
        return frame

    def update(self, frame_id: str, next_steps: Any, tags: Any, suppress: Any, unsuppress: Any) -> Frame:
        frame_id = text(frame_id, "frame_id", max_chars=64)
        with self.session.locked():
            frame = owned_frame(self.session, self.identity, frame_id)
            changed = updated(
                frame,
                self.session.clock.now(),
                next_steps=next_steps,
                tags=tags,
                suppress=suppress,
                unsuppress=unsuppress,
            )
            if dataclasses.replace(changed, version=frame.version, changed_at=frame.changed_at) == frame:
                return self._read(frame)  # nothing changed: nothing recorded
            self._commit(changed, "frame_update", "frame.updated")
        return self._read(changed)

    def close(self, frame_id: str, summary: str | None) -> Frame:
        frame_id = text(frame_id, "frame_id", max_chars=64)
        with self.session.locked():
            frame = closed(owned_frame(self.session, self.identity, frame_id), self.session.clock.now(), summary)
            self._commit(frame, "frame_close", "frame.closed")
        return self._read(frame)

    def get(self, frame_id: str) -> Frame:
        return self._read(owned_frame(self.session, self.identity, text(frame_id, "frame_id", max_chars=64)))

    def history(self, frame_id: str) -> list[Frame]:
        owned_frame(self.session, self.identity, text(frame_id, "frame_id", max_chars=64))
        return self.session.store.substrate.frame_versions(self.identity.tenant, frame_id)

    def mine(self, status: str | None) -> list[Frame]:
        if status is not None and status not in ("open", "closed"):
            raise InvalidInput("status must be open or closed", field="status")
        return self.session.store.substrate.frames(self.identity.tenant, consumer_of(self.identity), status)

    def _read(self, frame: Frame) -> Frame:
        substrate = self.session.store.substrate
        return dataclasses.replace(
            frame,
            footprint=tuple(substrate.footprint(frame.tenant, frame.frame_id)),
            surfaced=tuple(substrate.surfaced(frame.tenant, frame.frame_id)),
        )
