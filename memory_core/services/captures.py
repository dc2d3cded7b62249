"""remember's writes from a consumer: a capture (the interchange contract, written through the
normal write path and answered with a signed receipt of what was written) and a decision trace
(act, wait, escalate, no_op; its outcome added later as a new version). Each is made through a
lens the caller wears that grants the capability, and, when it names one, under a frame the
caller has open."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..errors import FrameClosed, NotFound
from ..identity import Scope
from ..inputs import text
from ..model import Provenance
from ..session import RunService
from ..session.point import run_set
from ..session.quarantine import quarantine_inputs
from ..session.substrate import (
    commit_records,
    decision_write,
    owned_frame,
    ready_to_sign,
    record_answer,
    sign_receipt,
    wear,
)
from ..substrate.answers import CaptureResult
from ..substrate.captures import parse_capture
from ..substrate.decisions import DecisionTrace, parse_decision, with_outcome
from ..substrate.frames import Frame
from ..substrate.lenses import Capability
from ..substrate.receipts import Disclosed
from ..substrate.refs import parse_refs, ref
from ..write.options import SetOptions
from ..write.settle import request_of


class CaptureService(RunService):
    def _open_frame(self, frame_id: str | None) -> Frame | None:
        if frame_id is None:
            return None
        frame = owned_frame(self.session, self.identity, frame_id)
        if not frame.open:
            raise FrameClosed(f"frame {frame_id} is closed: nothing more is made under it", frame_id=frame_id)
        return frame

    def capture(self, scope: str | Scope, **envelope: Any) -> CaptureResult:
        found = parse_capture(**envelope)
        worn = wear(self.session, self.identity, [found.lens_id], Capability.CAPTURE)
        self._open_frame(found.frame_id)
        ready_to_sign(self.session)  # a receipt that could not be signed refuses the capture before it writes
        namespace = self.identity.namespace(scope)
        provenance = dataclasses.replace(
            Provenance.of(self.identity, self.origin),
            lens_id=found.lens_id,
            frame_id=found.frame_id,
            actor_chain=(*found.actor_chain, self.identity.actor),
            author=found.author,
            source=found.source,
        )
        named = {"confidence": found.confidence, "observed_at": found.timestamp}
        options = SetOptions.parse(
            {
                "subject": found.entity,
                "memory_type": found.entity_type,
                **{name: value for name, value in named.items() if value is not None},
            }
        )
        request = request_of(namespace, found.key, found.claim, provenance, self.session.clock.now(), options, False)
        result = run_set(self.session, request)
        written = [r for r in result.rows if r.key == found.key] or list(result.rows)
        disclosed = [Disclosed(ref(r.kind.value, r.fact_id), r.id, r.content_sha256) for r in written]
        receipt = sign_receipt(self.session, self.identity, "capture", worn.ids, found.frame_id, disclosed)
        record_answer(
            self.session,
            self.identity,
            "capture",
            worn.ids,
            found.frame_id,
            [d.ref for d in disclosed],
            receipt,
            detail={"verdict": result.verdict, "key": found.key},
        )
        return CaptureResult(result.verdict, result.key, result.version, dict(result.details), receipt)

    def decide(
        self,
        decision: str,
        rationale: str,
        inputs: Sequence[str] | None,
        lens_id: str,
        frame_id: str | None,
        outcome: str | None,
        scope: str | Scope,
    ) -> DecisionTrace:
        choice = parse_decision(decision)
        why = text(rationale, "rationale", max_chars=8000)
        refs = parse_refs(inputs, "inputs")
        worn = wear(self.session, self.identity, [text(lens_id, "lens_id", max_chars=64)], Capability.DECIDE)
        frame = self._open_frame(text(frame_id, "frame_id", optional=True, max_chars=64))
        namespace = self.identity.namespace(scope)
        trace = DecisionTrace(
            decision_id=self.session.new_id(),
            version=1,
            tenant=namespace.tenant,
            scope=namespace.scope.value,
            owner_id=namespace.owner_id,
            decision=choice,
            rationale=why,
            inputs=refs,
            outcome=text(outcome, "outcome", optional=True, max_chars=4000),
            frame_id=frame.frame_id if frame else None,
            lens_id=worn.ids[0],
            intent=frame.intent if frame else None,
            tags=frame.tags if frame else (),
            actor=self.identity.actor,
            recorded_at=self.session.clock.now(),
        )
        with self.session.locked():
            commit_records(self.session, self.identity.actor, [decision_write(trace)])
            quarantine_inputs(self.session, self.identity, trace)  # a bad outcome known already
        return trace

    def outcome(self, decision_id: str, outcome: str, scope: str | Scope) -> DecisionTrace:
        """A decision's outcome once known: a new version of the trace. Only the consumer that made
        the decision adds its outcome; anyone else's (or a missing one) is not found."""
        decision_id = text(decision_id, "decision_id", max_chars=64)
        namespace = self.identity.namespace(scope)
        with self.session.locked():
            held = self.session.store.substrate.decision(self.identity.tenant, decision_id)
            mine = held is not None and held.actor == self.identity.actor
            if not mine or (held.scope, held.owner_id) != (namespace.scope.value, namespace.owner_id):
                raise NotFound(
                    f"no decision {decision_id!r} of yours in scope {namespace.scope.value}", decision_id=decision_id
                )
            trace = with_outcome(held, outcome, self.session.clock.now(), self.identity.actor)
            commit_records(self.session, self.identity.actor, [decision_write(trace)])
            # After the trace's commit, under the same lock: the outcome that is the reason is
            # stored before any fact is rejected for it (lifecycle/quarantine.py).
            quarantine_inputs(self.session, self.identity, trace)
        return trace
