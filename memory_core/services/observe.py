"""Observation capture (``docs/extraction.md``): tool-trace observations kept as episodic memory
rows, a session crystallized (marked ready), and the worker that replays each ready session
through ``set_from_messages`` once.

The observations go through the write path (one bulk transaction per record call), so audit,
reads, erasure and tenant isolation treat them as every other row; only a crystallized session's
state lives beside the log (``ObserveStore``). A crystallized session takes no more observations:
what the extraction replays is what was recorded before it.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..errors import InvalidInput, MemcoreError, NotFound, WrongState
from ..extraction.model import Extractor
from ..extraction.observe import (
    MEMORY_TYPE,
    Observed,
    as_messages,
    check_observations,
    check_session_id,
    is_observation_of,
    observation_keys,
    ordered,
    session_prefix,
)
from ..identity import Identity, Namespace, Scope, identity_fields, identity_from
from ..llm import LLMMalformed, LLMRefused, LLMUnavailable
from ..model import FactVersion, Provenance
from ..ports.observe import ObserveSession
from ..session import RunService, Session
from ..session.bulk import write_entries
from .extraction import ExtractionService

MAX_ATTEMPTS = 3  # a session whose replay keeps failing is marked failed after this many claims
MAX_SESSION_KEYS = 1_000_000  # the keys of one session read back (2,000 full record calls)


def observation_keys_of(session: Session, namespace: Namespace, session_id: str) -> list[str]:
    """Every key the session's observations were ever kept under (a deleted one too), read by
    prefix: a session's calls never scan the rest of the namespace."""
    found = session.versions.keys_under(namespace, session_prefix(session_id), MAX_SESSION_KEYS)
    return [k for k in found if is_observation_of(k, session_id)]


def observation_rows(session: Session, namespace: Namespace, session_id: str) -> list[FactVersion]:
    """The session's live observation rows in the namespace, in recording order."""
    now, rows = session.clock.now(), []
    for key in observation_keys_of(session, namespace, session_id):
        live = [
            s
            for s in session.versions.fact_states(namespace, key)
            if s.live and not s.expired(now) and s.memory_type == MEMORY_TYPE
        ]
        if live:
            rows.append(max(live, key=lambda s: s.version))
    found = ordered([Observed(r.key, r.value) for r in rows])
    by_key = {r.key: r for r in rows}
    return [by_key[o.key] for o in found]


class ObserveService(RunService):
    def record(self, session_id: str, observations: Sequence[Any], *, scope: str | Scope) -> dict[str, Any]:
        namespace = self.identity.namespace(scope)  # a missing grant is refused before anything else
        session_id = check_session_id(session_id)
        values = check_observations(observations)
        state = self.session.store.observe.session(namespace, session_id)
        if state is not None:
            raise WrongState(
                f"session {session_id!r} was crystallized: it takes no more observations", session_id=session_id
            )
        existing = observation_keys_of(self.session, namespace, session_id)  # a deleted one's ordinal too
        keys = observation_keys(session_id, existing, len(values), self.session.new_id()[:8])
        entries = [{"key": k, "value": v, "memory_type": MEMORY_TYPE} for k, v in zip(keys, values)]
        identity = dataclasses.replace(self.identity, session=session_id)
        origin = self.origin if self.origin != "memory.api" else "memory.observe_record"
        result = write_entries(self.session, namespace, entries, Provenance.of(identity, origin), dry_run=False)
        return {
            "session": session_id,
            "recorded": len(entries),
            "keys": [e["key"] for e in entries],
            "written": len(result.written),
        }

    def crystallize(self, session_id: str, *, scope: str | Scope) -> dict[str, Any]:
        namespace = self.identity.namespace(scope)
        session_id = check_session_id(session_id)
        store = self.session.store.observe
        state = store.session(namespace, session_id)
        if state is not None:  # a second crystallize changes nothing
            return {**state.to_dict(), "changed": False}
        self.session.refuse_read_only("crystallize marks the session ready")
        rows = observation_rows(self.session, namespace, session_id)
        if not rows:
            raise NotFound(f"no observations recorded for session {session_id!r} in this scope", session_id=session_id)
        identity = identity_fields(dataclasses.replace(self.identity, session=session_id))
        state, changed = store.crystallize(
            namespace,
            session_id,
            observations=len(rows),
            identity=identity,
            actor=self.identity.actor,
            now=self.session.clock.now(),
        )
        return {**state.to_dict(), "changed": changed}

    def status(self, session_id: str, *, scope: str | Scope) -> dict[str, Any]:
        """A session's state: open (observations, not crystallized), ready, running, done or failed."""
        namespace = self.identity.namespace(scope)
        session_id = check_session_id(session_id)
        state = self.session.store.observe.session(namespace, session_id)
        if state is not None:
            return state.to_dict()
        rows = observation_rows(self.session, namespace, session_id)
        if not rows:
            raise NotFound(f"no observations recorded for session {session_id!r} in this scope", session_id=session_id)
        return {"session": session_id, "scope": namespace.scope.value, "status": "open", "observations": len(rows)}

    def observations(self, session_id: str, *, scope: str | Scope) -> list[FactVersion]:
        namespace = self.identity.namespace(scope)
        return observation_rows(self.session, namespace, check_session_id(session_id))


class ObserveWorker:
    """Replays ready sessions (``Memory.observe_extract``): each claimed session's observations
    become one ``set_from_messages`` call as the identity that crystallized it, and the session is
    marked done with what it wrote. A done session is never claimed again."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def run(self, *, worker: str, limit: int, lease_s: float, extractor: Extractor | None) -> dict[str, Any]:
        session, clock = self.session, self.session.clock
        session.refuse_read_only("the observation extraction writes facts")
        counts: dict[str, Any] = {"claimed": 0, "done": 0, "failed": 0, "waiting": 0, "lease_lost": 0, "facts": 0}
        sessions: list[str] = []
        for claimed in session.store.observe.claim(worker, clock.now(), lease_s=lease_s, limit=limit):
            counts["claimed"] += 1
            end: dict[str, Any]
            try:
                result = self._replay(claimed, extractor)
            except LLMUnavailable as exc:  # the provider was never reached: no attempt spent
                end = dict(status="ready", error=exc.message, spent=exc.reached)
            except (LLMRefused, LLMMalformed, InvalidInput) as exc:
                end = dict(status="failed", error=f"{exc.code}: {exc.message}")
            except MemcoreError as exc:
                again = claimed.attempts < MAX_ATTEMPTS
                end = dict(status="ready" if again else "failed", error=f"{exc.code}: {exc.message}")
            else:
                end = dict(status="done", result=result)
                counts["facts"] += len(result["facts"])
            kept = session.store.observe.finish(claimed, worker, clock.now(), **end)
            outcome = {"ready": "waiting"}.get(end["status"], end["status"])
            counts[outcome if kept else "lease_lost"] += 1
            sessions.append(claimed.session)
        counts["sessions"] = sessions
        return counts

    def _replay(self, claimed: ObserveSession, extractor: Extractor | None) -> dict[str, Any]:
        identity: Identity = identity_from(claimed.identity)
        rows = observation_rows(self.session, claimed.namespace, claimed.session)
        if not rows:  # erased or deleted since it was crystallized: nothing to replay
            return {"facts": [], "observations": 0, "extractor": None}
        messages = as_messages([Observed(r.key, r.value) for r in rows])
        result = ExtractionService(self.session, identity, "worker:observe").set_from_messages(
            messages,
            session=claimed.session,
            session_date=None,
            scope=claimed.namespace.scope,
            steps=None,
            extractor=extractor,
            compaction_generation=None,
            dry_run=False,
        )
        return {
            "facts": list(result.written),
            "observations": len(rows),
            "extractor": result.extractor,
            "evidence": result.evidence,
        }
