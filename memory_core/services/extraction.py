"""Extraction on the Memory tool: ``set_from_messages`` now, or queued for a worker later
(``enqueue_extraction``), and the worker that runs the queue (``ExtractionWorker``).

A queued conversation is validated on the caller's path and read later by a worker, as the
identity that queued it. A job whose worker dies returns to the line when its lease runs out; an
unreachable provider spends no attempt; a refusal or an unusable answer fails the job at once;
other failures wait with exponential backoff until ``max_attempts``. Harvested spans (see
``extraction.harvest``) are consolidated the same way, with the consolidation steps: the spans of
one session a worker claims together as one batch (``services.harvest``), and one outcome for all.
"""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from ..errors import InvalidInput, MemcoreError
from ..extraction.harvest import CONSOLIDATION_STEPS, HarvestBatch, check_harvest_payload
from ..extraction.model import Extracted, Extractor, parse_messages
from ..extraction.pipeline import ExtractionState, Step, StepContext, resolve_steps, run_steps
from ..extraction.result import ExtractionResult
from ..identity import Identity, Scope, identity_fields, identity_from
from ..lifecycle.flags import decide_delete
from ..lifecycle.namespaces import NamespaceDeleted
from ..llm import LLMMalformed, LLMRefused, LLMUnavailable
from ..model import FactVersion, Provenance, WriteResult
from ..ports import QueueRow
from ..session import RunService, Session
from ..session.bulk import write_entries
from ..session.categories import add_new_category_links, defined_categories
from ..session.holds import refuse_held
from ..session.keys import decide_key
from ..session.lineage import record_extraction_links
from ..session.point import set_value
from ..session.reads import known_types, live_keys
from ..temporal import iso, parse_instant
from ..values import canonical_json
from .harvest import claimed_batches, read_batch
from .learnings import LearningsService


class _StepWriter(RunService):
    """What an extraction step may do to memory (``extraction.pipeline.StepTool``), as the run
    that extracts: the caller's identity, in the transcript's session, attributed to the model."""

    def list(self, *, scope: str | Scope = Scope.USER) -> list[FactVersion]:
        return live_keys(self.session, self.identity.namespace(scope), None, None)

    def delete(self, key: str, *, scope: str | Scope = Scope.USER) -> WriteResult:
        return decide_key(self.session, self.identity, key, scope, decide_delete, "delete")

    def set(self, key: str, value: Any, *, scope: str | Scope = Scope.USER, **options: Any) -> WriteResult:
        return set_value(self.session, self.identity, self.origin, key, value, scope=scope, dry_run=False, **options)

    def bulk_set(self, entries: Sequence[dict[str, Any]], *, scope: str | Scope = Scope.USER, dry_run: bool = False):
        provenance = Provenance.of(self.identity, self.origin)
        return write_entries(self.session, self.identity.namespace(scope), entries, provenance, dry_run=dry_run)

    def known_types(self, subject: str) -> list[str]:
        return known_types(self.session, self.identity, subject)

    def namespace_categories(self, *, scope: str | Scope = Scope.USER) -> list[tuple[str, str | None]]:
        return [(c.name, c.description) for c in defined_categories(self.session, self.identity.namespace(scope))]

    def categorize(
        self, wanted: Mapping[str, Sequence[str]], *, scope: str | Scope = Scope.USER
    ) -> list[tuple[str, str]]:
        namespace = self.identity.namespace(scope)
        return add_new_category_links(self.session, namespace, wanted, self.identity.actor, "extraction")

    def file_learnings(self, facts: Sequence[Extracted]) -> list[str]:
        return LearningsService(self.session, self.identity, self.origin).file(facts)


class ExtractionService(RunService):
    def set_from_messages(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        session: str | None,
        session_date: datetime | str | None,
        scope: str | Scope,
        steps: Sequence[str] | None,
        extractor: Extractor | None,
        compaction_generation: int | None,
        dry_run: bool,
    ) -> ExtractionResult:
        session = session or self.identity.session or "session"
        turns = parse_messages(messages, session=session)
        chosen = resolve_steps(steps, self.session.extraction.steps)
        self.identity.namespace(scope)  # refuse a missing grant before any work
        when = parse_instant(session_date, "session_date")
        state = ExtractionState(turns, session, when, compaction_generation=compaction_generation)
        return self._run(state, scope=scope, steps=chosen, extractor=extractor, dry_run=dry_run)

    def consolidate(self, batch: HarvestBatch, *, scope: str | Scope) -> ExtractionResult:
        """Extract a harvested batch (its turns read after its context) with the consolidation steps."""
        state = ExtractionState(
            batch.turns,
            batch.session,
            None,
            compaction_generation=max(batch.generations.values(), default=None),
            context=batch.context,
            generations=dict(batch.generations),
        )
        chosen = resolve_steps(CONSOLIDATION_STEPS, self.session.extraction.steps)
        return self._run(state, scope=scope, steps=chosen, extractor=None, dry_run=False)

    def _run(
        self,
        state: ExtractionState,
        *,
        scope: str | Scope,
        steps: list[tuple[str, Step]],
        extractor: Extractor | None,
        dry_run: bool,
    ) -> ExtractionResult:
        extractor = extractor or self.session.extraction.extractor
        namespace = self.identity.namespace(scope)
        origin = self.origin if self.origin != "memory.api" else "memory.set_from_messages"
        session = state.session
        writer = _StepWriter(
            self.session, dataclasses.replace(self.identity, session=session, model=extractor.name), origin
        )
        run_steps(state, StepContext(writer, extractor, namespace.scope, dry_run, llm=self.session.llm), steps)
        if not dry_run:
            try:  # derived: the rows are written; a link that fails to keep is a note, never a failure
                record_extraction_links(self.session, namespace, state)
            except Exception as exc:  # noqa: BLE001
                state.notes.append(f"belief sources not recorded: {type(exc).__name__}")
        written = state.written.written if state.written else ()
        fact_keys = tuple(sorted({r.key for r in written if not r.key.startswith(("evidence:", "chunk:"))}))
        evidence = len({r.key for r in written if r.key.startswith("evidence:")})
        extracted = len(state.facts) + sum(len(v) for v in state.dropped.values())
        return ExtractionResult(
            session,
            extractor.name,
            tuple(n for n, _ in steps),
            extracted,
            fact_keys,
            {k: tuple(v) for k, v in state.dropped.items()},
            tuple(state.forgotten),
            evidence,
            dry_run,
            state.usage,
            tuple(state.notes),
            learnings=tuple(state.learnings),
        )

    def enqueue_extraction(
        self,
        messages: Sequence[dict[str, Any]],
        *,
        session: str | None,
        session_date: datetime | str | None,
        scope: str | Scope,
        max_attempts: int,
    ) -> str:
        identity = self.identity
        namespace = identity.namespace(scope)
        session = session or identity.session or "session"
        turns = parse_messages(messages, session=session)  # refuse a bad transcript now, not in the worker
        when = parse_instant(session_date, "session_date")
        if isinstance(max_attempts, bool) or not isinstance(max_attempts, int) or not 1 <= max_attempts <= 50:
            raise InvalidInput("max_attempts must be an integer from 1 to 50", field="max_attempts")
        queue_id = "xq-" + self.session.new_id()[:16]
        payload = {
            # The queue keeps JSON: an instant given as a datetime is kept as its ISO text.
            "messages": [{**m, "at": iso(t.at)} if "at" in m else dict(m) for m, t in zip(messages, turns)],
            "session": session,
            "session_date": iso(when),
            "identity": identity_fields(identity),
        }
        canonical_json(payload, levels_above=3, max_chars=None)  # what the queue cannot keep is refused here
        refuse_held(self.session.store, [namespace])  # an erasure holds the scope: nothing is queued there
        self.session.queue.enqueue(
            queue_id,
            namespace,
            identity.actor,
            "extract",
            payload,
            self.session.clock.now(),
            max_attempts=max_attempts,
        )
        return queue_id

    def extraction_status(self, queue_ids: Sequence[str] | None, *, scope: str | Scope) -> list[QueueRow]:
        return self.session.queue.queue_rows(self.identity.namespace(scope), self.identity.actor, queue_ids)

    def extraction_queue_status(self, *, scope: str | Scope) -> dict[str, int]:
        return self.session.queue.queue_counts(self.identity.namespace(scope))

    def retry_extraction(self, queue_ids: Sequence[str] | None, *, scope: str | Scope) -> list[str]:
        return self.session.queue.retry_failed(
            self.identity.namespace(scope), self.identity.actor, queue_ids, self.session.clock.now()
        )


# A handler runs one batch of claimed jobs (``services.harvest.claimed_batches``) and returns the
# result every job of it is completed with.
Handler = Callable[[Session, Sequence[QueueRow]], dict[str, Any]]


def _job_identity(body: Any, fields: Sequence[str]) -> Identity:
    """The identity a queued job runs as; a payload without it or its ``fields`` (written by hand,
    or by an older build) fails its job at once rather than the worker."""
    try:
        missing = [name for name in fields if name not in body]
        if not missing:
            return identity_from(body["identity"])
    except (KeyError, TypeError):
        missing = ["identity"]
    raise InvalidInput(f"the queued job's payload is malformed (no {', '.join(missing)})", field="payload")


def run_extract_job(session: Session, rows: Sequence[QueueRow]) -> dict[str, Any]:
    [row] = rows  # a queued extraction is a batch of its own
    body = row.payload
    identity = _job_identity(body, ("identity", "messages", "session", "session_date"))
    tool = ExtractionService(session, identity, "worker:extraction")
    result = tool.set_from_messages(
        body["messages"],
        session=body["session"],
        session_date=body["session_date"],
        scope=row.namespace.scope,
        steps=None,
        extractor=None,
        compaction_generation=None,
        dry_run=False,
    )
    return result.to_dict()


def run_harvest_batch(session: Session, rows: Sequence[QueueRow]) -> dict[str, Any]:
    """Consolidate banked spans of one session: extract them as one batch, read after the spans
    banked before them, place, and write durable facts."""
    batch = read_batch(session, rows)
    identity = _job_identity(check_harvest_payload(rows[0].payload), ())
    result = ExtractionService(session, identity, "worker:consolidation").consolidate(
        batch, scope=rows[0].namespace.scope
    )
    spans = [
        {"queue_id": r.queue_id, "generation": r.payload["generation"], "boundary": r.payload["boundary"]} for r in rows
    ]
    return {**result.to_dict(), "spans": spans, "context_turns": len(batch.context)}


HANDLERS: dict[str, Handler] = {"extract": run_extract_job, "harvest": run_harvest_batch}


class ExtractionWorker:
    """Runs the queue of a home (``Memory.run_extraction_queue``) and banks harvested spans."""

    def __init__(self, session: Session, handlers: dict[str, Handler] | None = None) -> None:
        self.session = session
        self.handlers = handlers or HANDLERS

    def bank_harvest(self, identity: Identity, payload: dict[str, Any], *, capacity: int) -> bool:
        session = self.session
        payload = check_harvest_payload(payload)
        queue_id = "hv-" + session.new_id()[:16]
        namespace = identity.namespace(Scope.USER)
        refuse_held(session.store, [namespace])
        return session.queue.enqueue(
            queue_id, namespace, identity.actor, "harvest", payload, session.clock.now(), capacity=capacity
        )

    def run(self, *, worker: str, limit: int, lease_s: float, kinds: Sequence[str]) -> dict[str, int]:
        """Lease up to ``limit`` due jobs and run them, batch by batch; returns counts by outcome
        (each job of a batch counted)."""
        queue, clock = self.session.queue, self.session.clock
        counts = {"done": 0, "failed": 0, "waiting": 0, "lease_lost": 0, "claimed": 0}
        claimed = queue.claim(worker, clock.now(), lease_s=lease_s, limit=limit, kinds=kinds)
        for batch in claimed_batches(claimed):
            counts["claimed"] += len(batch)
            try:
                result = self.handlers[batch[0].kind](self.session, batch)
            except LLMUnavailable as exc:
                end = dict(error=exc.message, spent=exc.reached)
                outcome = "waiting"
            except (LLMRefused, LLMMalformed, InvalidInput) as exc:
                end = dict(error=f"{exc.code}: {exc.message}", spent=True, permanent=True)
                outcome = "failed"
            except NamespaceDeleted as exc:  # it waits, unspent, until namespace_register brings it back
                end = dict(error=f"{exc.code}: {exc.message}", spent=False)
                outcome = "waiting"
            except MemcoreError as exc:
                end = dict(error=f"{exc.code}: {exc.message}", spent=True)
                outcome = "waiting"
            else:
                end, outcome = {}, "done"
            for row in batch:  # one outcome for the batch: its facts were written, or none were
                if outcome == "done":
                    kept = queue.complete(row.queue_id, worker, clock.now(), result)
                else:
                    kept = queue.fail(row.queue_id, worker, clock.now(), **end)
                counts[outcome if kept else "lease_lost"] += 1
        return counts
