"""Structured profiles: the per-namespace schema (``MemoryTool.profile_schema_set``, versioned and
audited), each user's profile as it stands (``MemoryTool.profile``), and the worker that builds
them (``Memory.build_profiles``, the ``structured_profile`` asset: docs/workers.md).

A profile is a memory row (memory_type ``profile`` at ``profile:structured`` in the user's scope)
written through the write path as ``worker:structured-profile``, so its history, erasure and read
scope are memory's own. It carries the schema's hash and its sources' digest; the worker rebuilds
it only when either changed, so a second run over unchanged facts writes nothing.
"""

from __future__ import annotations

import dataclasses
import logging
from typing import Any, Mapping

from ..audit import audit_entry
from ..errors import AdminRequired, InvalidInput, MemcoreError
from ..identity import Namespace, Scope
from ..model import Provenance
from ..profiles import (
    BEHIND,
    PROFILE_ACTOR,
    PROFILE_KEY,
    PROFILE_TYPE,
    ProfileSchemaInfo,
    StructuredProfile,
    build_profile,
    parse_schema,
)
from ..session import RunService, Session
from ..session.holds import held, refuse_held
from ..session.point import run_set
from ..session.profiles import read_profile
from ..write.options import SetOptions
from ..write.settle import request_of

log = logging.getLogger(__name__)

ORIGIN = "memory.structured_profile"
_SCHEMA_SCOPES = (Scope.TENANT, Scope.USER)
# A profile is derived from the user's facts, not said by anyone: its rows rank as derived.
_WRITE = SetOptions.parse({"memory_type": PROFILE_TYPE, "source_class": "derived"})


class ProfileService(RunService):
    def _schema_namespace(self, scope: str | Scope) -> Namespace:
        where = Scope.parse(scope)
        if where not in _SCHEMA_SCOPES:
            raise InvalidInput("a profile schema is set for the tenant or for a user", field="scope")
        return self.identity.namespace(where)

    def schema_set(self, schema: Mapping[str, Any], scope: str | Scope) -> ProfileSchemaInfo:
        """Store a new version of the scope's schema; the same schema again stores nothing."""
        ns = self._schema_namespace(scope)
        if ns.scope is Scope.TENANT and not self.identity.admin:
            raise AdminRequired("the tenant's profile schema is set by an admin")
        parsed = parse_schema(schema)  # refused whole, before anything is read or stored
        session = self.session
        session.refuse_read_only("profile_schema_set")
        refuse_held(session.store, [ns])
        store = session.store.profiles
        with session.locked():
            current = store.schema(ns)
            if current is not None and current.schema_hash == parsed.hash:
                return current
            now, actor = session.clock.now(), self.identity.actor
            info = ProfileSchemaInfo(
                ns.tenant, ns.scope.value, ns.owner_id, 0, parsed.hash, parsed.to_dict(), actor, now
            )
            audit = audit_entry(ns, "profile_schema", "profile_schema_set", (), parsed.hash, actor, now)
            version = store.put_schema(info, audit)
        return dataclasses.replace(info, version=version)

    def schema(self, scope: str | Scope) -> ProfileSchemaInfo | None:
        return self.session.store.profiles.schema(self._schema_namespace(scope))

    def profile(self) -> StructuredProfile:
        ns = self.identity.namespace(Scope.USER)
        return read_profile(self.session, ns, self.session.clock.now()).answer()


def _name(ns: Namespace) -> str:
    return f"{ns.tenant}/{ns.scope.value}/{ns.owner_id}"


class StructuredProfiles:
    """The worker: every user a schema applies to, each profile rebuilt where it is behind."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def users(self) -> list[Namespace]:
        """The user namespaces a schema applies to: a user's own, and every user of a tenant with
        a tenant schema (each user the store knows of)."""
        store, found = self.session.store, set()
        for ns in store.profiles.schema_namespaces():
            if ns.scope is Scope.USER:
                found.add(ns)
            elif ns.scope is Scope.TENANT:
                pairs = store.erasure.namespaces(ns.tenant)
                found.update(Namespace(ns.tenant, Scope.USER, owner) for scope, owner in pairs if scope == "user")
        # A namespace an erasure holds, or one deleted, is left as it is.
        return sorted((ns for ns in found if not held(store, ns)), key=lambda n: (n.tenant, n.owner_id))

    def run(self, *, apply: bool = True, examples: int = 20) -> dict[str, Any]:
        """Build (``apply``) each profile that is ``absent`` or ``stale``. Counts by status before
        the run, how many were built or failed, and the users that were behind."""
        session = self.session
        if apply:
            session.refuse_read_only("the structured profile worker writes profile rows")
        counts = {"users": 0, "current": 0, "stale": 0, "absent": 0, "empty": 0, "built": 0, "failed": 0}
        behind: list[str] = []
        failures: list[dict[str, str]] = []
        for ns in self.users():
            # Under the store's lock from the read to the write: the digest a profile carries is
            # that of the facts it was built from.
            with session.locked():
                now = session.clock.now()
                found = read_profile(session, ns, now)
                counts["users"] += 1
                counts[found.status] += 1
                if found.status not in BEHIND:
                    continue
                behind.append(_name(ns))
                if not apply:
                    continue
                body = build_profile(found.schema, found.sources)
                provenance = Provenance(tenant=ns.tenant, actor=PROFILE_ACTOR, origin=ORIGIN)
                try:
                    run_set(session, request_of(ns, PROFILE_KEY, body.to_value(), provenance, now, _WRITE))
                except MemcoreError as exc:  # a locked or pinned key, a held namespace, a value too long
                    counts["failed"] += 1
                    failures.append({"user": _name(ns), "code": exc.code, "message": exc.message[:200]})
                    continue
                counts["built"] += 1
        if counts["built"]:
            log.info("structured profiles: built %d of %d users' profiles", counts["built"], counts["users"])
        return {**counts, "behind": behind[:examples], "failures": failures[:examples]}
