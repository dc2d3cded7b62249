"""The erasure saga: erase a user, an agent, namespaces or a tenant from every plane of the home,
then prove it with a residue census. The decisions are ``memory_core.erasure``'s; this service
runs the steps through the ports and checkpoints each one as a new version of the request row,
so a run killed anywhere resumes where it stopped (``recover``)."""

from __future__ import annotations

from typing import Any, Callable

from ..audit import AuditEntry
from ..erasure import Census, ErasureRequest, ErasureStatus, ErasureTarget, pick_needles
from ..erasure.saga import abandon, advance, begin, census_outcome, next_step, recovery_due, start_run
from ..errors import ErasureNotFound
from ..ports import ErasureStore
from ..session import Session
from ..webhooks.model import erased_announcements
from .learnings import settle_unsupported

# Called with "before:<step>", "mid:<step>" (its work done, not yet checkpointed) and
# "after:<step>": how a test stops a saga at each boundary.
Observer = Callable[[str], None]


def _quiet(_: str) -> None:
    return None


class ErasureService:
    def __init__(self, session: Session, observer: Observer | None = None) -> None:
        self.session = session
        self.observe = observer or _quiet

    @property
    def _store(self) -> ErasureStore:
        return self.session.store.erasure

    # -- requests ------------------------------------------------------------------------------

    def request(self, target: ErasureTarget, *, actor: str) -> ErasureRequest:
        """Queue an erasure of ``target`` (its scope is held from now on) and run it."""
        self.session.refuse_read_only("an erasure writes")
        queued = begin(self.session.new_id(), target, actor, self.session.clock.now())
        self._store.save(queued)
        return self.run(queued.request_id, actor=actor)

    def get(self, request_id: str) -> ErasureRequest:
        found = self._store.requests(request_id)
        if not found:
            raise ErasureNotFound(f"no erasure request {request_id}", request_id=request_id)
        return found[0]

    def list(self) -> list[ErasureRequest]:
        return self._store.requests()

    def run(self, request_id: str, *, actor: str) -> ErasureRequest:
        """Run (or resume) a request's steps until it verifies or fails. One saga runs at a time
        in a process (a recovery never runs a request a caller is running)."""
        with self.session.erasing:
            return self._run(request_id, actor=actor)

    def _run(self, request_id: str, *, actor: str) -> ErasureRequest:
        request = self.get(request_id)
        if not request.holding:
            return request
        request = self._save(start_run(request, self.session.clock.now(), actor))
        rerun = False
        while request.status is ErasureStatus.RUNNING:
            step = next_step(request)
            if step is None:  # every step ran: only the census's verdict can end a run
                break
            self.observe(f"before:{step}")
            if step == "census":
                census = self._census(request)
                self.observe(f"mid:{step}")
                outcome = census_outcome(request, census, self.session.clock.now(), rerun=rerun)
                if outcome.status is ErasureStatus.VERIFIED:  # announced before the checkpoint: at least once
                    self._announce(outcome)
                request = self._save(outcome)
                rerun = True
                if request.status is ErasureStatus.VERIFIED and self.session.files is not None:
                    self.session.files.drop_needles(request.request_id)
            else:
                getattr(self, f"_{step}")(request)
                self.observe(f"mid:{step}")
                request = self._save(advance(request, step, self.session.clock.now()))
            self.observe(f"after:{step}")
        return request

    def recover(self, *, max_attempts: int = 3, actor: str = "worker:erasure-recovery") -> dict[str, int]:
        """Resume every request still holding its scope; give one up after ``max_attempts`` runs
        (its status says abandoned and why). Counts by what happened."""
        counts = {"resumed": 0, "verified": 0, "abandoned": 0}
        with self.session.erasing:
            for request in self._store.requests():
                self._recover(request, max_attempts, actor, counts)
        return counts

    def _recover(self, request: ErasureRequest, max_attempts: int, actor: str, counts: dict[str, int]) -> None:
        due = recovery_due(request, max_attempts)
        if due != "resume" and self.session.files is not None:
            # Ended (or given up now): no needle file outlives it, even one a run killed between
            # its last checkpoint and the file's removal left behind.
            self.session.files.drop_needles(request.request_id)
        if due == "abandon":
            self._save(abandon(request, self.session.clock.now(), actor))
            counts["abandoned"] += 1
        elif due == "resume":
            counts["resumed"] += 1
            if self._run(request.request_id, actor=actor).status is ErasureStatus.VERIFIED:
                counts["verified"] += 1

    def _save(self, request: ErasureRequest) -> ErasureRequest:
        self._store.save(request)
        return request

    def _announce(self, request: ErasureRequest) -> None:
        target, webhooks = request.target, self.session.store.webhooks
        at = request.verified_at or self.session.clock.now()
        hooks = webhooks.webhooks(target.tenant)  # those that take memory.erased are chosen there
        webhooks.append_committed(erased_announcements(request.request_id, target.tenant, target.pairs, at, hooks))

    # -- the steps (each idempotent) -----------------------------------------------------------

    def _needles(self, request: ErasureRequest) -> dict[str, Any]:
        found = self.session.files.needles(request.request_id) if self.session.files is not None else None
        return found or {"needles": [], "fact_ids": [], "shared": 0}

    def _collect(self, request: ErasureRequest) -> None:
        target = request.target
        # Name the tenant's SQL databases while its rows still say who owns which (a database
        # made before owner notes existed is found by its digest name).
        self.session.sql.note_owners(target.tenant, self._store.namespaces(target.tenant))
        texts, fact_ids = self._store.collect(target)
        needles = pick_needles(texts, identifiers=target.identifiers)
        shared = self._store.shared(request.target, needles)
        body = {"needles": [n for n in needles if n not in shared], "fact_ids": fact_ids, "shared": len(shared)}
        if self.session.files is not None:
            self.session.files.put_needles(request.request_id, body)

    def _index(self, request: ErasureRequest) -> None:
        session = self.session
        if session.has_index:
            session.require_index().forget(self._needles(request)["fact_ids"])
        elif session.files is not None and session.files.drop_index():
            # No embedder to open the index with: it goes whole, and the next open with one
            # rebuilds it from the store (what was erased is no longer there to index).
            session.projections.set_index_watermark(0)

    def _rows(self, request: ErasureRequest) -> None:
        target = request.target
        pairs = target.pairs
        scope, owner = pairs[0] if pairs and len(pairs) == 1 else ("tenant", target.tenant)
        entry = AuditEntry(
            at=self.session.clock.now(),
            tenant=target.tenant,
            scope=scope,
            owner_id=owner,
            key=f"erasure:{request.request_id}",
            op="erase",
            version_ids="",
            content_sha256=None,
            actor=request.actor,
        )
        with self.session.locked():
            self._store.erase_rows(target, entry)
            settle_unsupported(self.session, target.tenant)  # candidates whose last supporter went

    def _audit_keys(self, request: ErasureRequest) -> None:
        with self.session.locked():
            self._store.scrub_audit_keys(request.target)

    def _sql(self, request: ErasureRequest) -> None:
        self.session.sql.erase(request.target.tenant, request.target.pairs)

    def _caches(self, request: ErasureRequest) -> None:
        session = self.session
        session.forget_peers()
        session.conversations.forget()
        session.entities.forget()
        session.searches.forget()
        if session.files is not None:
            session.files.drop_quoting(self._needles(request)["needles"])

    def _compact(self, request: ErasureRequest) -> None:
        with self.session.locked():
            self._store.rewrite()

    def _census(self, request: ErasureRequest) -> Census:
        target, found = request.target, self._needles(request)
        needles = found["needles"]
        tables = self._store.census_rows(target)
        tables["learnings_unsupported"] = len(self.session.store.learnings.unsupported(target.tenant))
        tables["sql_databases"] = len(self.session.sql.databases(target.tenant, target.pairs))
        if target.pairs is None:  # a database no note names may be the tenant's: not proven gone
            tables["sql_unattributed"] = len(self.session.sql.unattributed())
        files, scanned = self.session.files.scan(needles) if self.session.files is not None else ({}, 0)
        return Census(tables, self._store.census_text(needles), files, len(needles), scanned)
