"""The reads several services share: a key at an instant, a scope's live keys, and what the
tenant's ontology and graph say about where a fact belongs."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import InvalidInput, MemcoreError
from ..graph.model import entity_id
from ..identity import Identity, Namespace, Scope
from ..model import VISIBLE_STATUSES, FactVersion
from ..placement import Ontology, Placement, parse_ontology
from ..placement import decide as decide_placement
from ..temporal import Instant, parse_instant
from ..timeline import FactState, fact_at
from ..write.settle import validate_key

if TYPE_CHECKING:
    from .core import Session


def read_times(now: datetime, as_of: Instant, known_at: Instant) -> tuple[datetime, datetime | None]:
    """The valid time and the transaction time a read answers for. ``known_at`` alone answers
    what the read answered at that instant."""
    known = parse_instant(known_at, "known_at")
    when = parse_instant(as_of, "as_of")
    return (when or known or now), known


def fact_at_time(
    session: Session, namespace: Namespace, key: Any, as_of: Instant, known_at: Instant
) -> FactVersion | None:
    """The fact of ``key`` live at ``as_of`` (default now) as the store believed it at ``known_at``.
    An expired fact is hidden at once, before the sweep records it."""
    key = validate_key(key)
    now = session.clock.now()
    when, known = read_times(now, as_of, known_at)
    states = [
        s
        for s in session.versions.fact_states(namespace, key, known)
        if s.status.value in VISIBLE_STATUSES and not s.expired(now)
    ]
    found = fact_at([FactState(s.fact_id, s.content_sha256, s.valid_at, s.invalid_at) for s in states], when)
    return None if found is None else next(s for s in states if s.fact_id == found.fact_id)


def live_keys(session: Session, namespace: Namespace, as_of: Instant, known_at: Instant) -> list[FactVersion]:
    """Every key of the scope with a fact live at ``as_of``, ordered by key."""
    now = session.clock.now()
    when, known = read_times(now, as_of, known_at)
    return [s for s in session.versions.live_facts(namespace, when, known) if not s.expired(now)]


def ontology_of(session: Session, tenant: str) -> Ontology | None:
    """The tenant's newest ontology, parsed, with its version (None when it has none)."""
    found = session.settings.ontology(tenant)
    if found is None:
        return None
    version, markdown = found
    return dataclasses.replace(parse_ontology(markdown), version=version)


def known_types(session: Session, identity: Identity, subject: str) -> list[str]:
    """The entity types the graph gives ``subject`` in the scopes this run can read (user, tenant)."""
    known: set[str] = set()
    for scope in (Scope.USER, Scope.TENANT):
        try:
            namespace = identity.namespace(scope)
        except MemcoreError:
            continue  # a scope this run cannot read tells it nothing
        known.update(session.graph.entity_types(namespace, entity_id(subject)))
    return sorted(known)


def placement(
    session: Session,
    identity: Identity,
    subject: Any,
    subject_type: Any,
    *,
    known: Iterable[str] = (),
    profile_owner: str | None = None,
) -> Placement:
    """Where a fact about ``subject`` of ``subject_type`` belongs for this run, and why."""
    for name, value in (("subject", subject), ("subject_type", subject_type)):
        if not isinstance(value, str) or not value.strip():
            raise InvalidInput(f"{name} must be a non-empty string", field=name)
    return decide_placement(
        ontology_of(session, identity.tenant),
        subject,
        subject_type,
        identity,
        known_types=known,
        profile_owner=profile_owner,
    )


def place_fact(session: Session, identity: Identity, subject: Any, subject_type: Any) -> Placement:
    """The placement of a fact about ``subject``: the types the graph already gives the subject (in
    the user's scope and, when readable, the tenant's) count as known types."""
    if not isinstance(subject, str) or not isinstance(subject_type, str):
        raise InvalidInput(
            'scope="auto" needs subject and subject_type (the entity the fact is about)', field="subject"
        )
    return placement(session, identity, subject, subject_type, known=known_types(session, identity, subject))
