"""The tenant's settings on the Memory tool: write configuration, the ontology, and placement.

Writes are admin-only and audited; placement is a pure decision (``memory_core.placement``)."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from ..audit import audit_entry
from ..errors import AdminRequired
from ..identity import Scope
from ..placement import Ontology, Placement, parse_ontology
from ..session import RunService
from ..session.reads import known_types, ontology_of, place_fact, placement
from ..values import canonical_json, content_sha256
from ..write.settle import validate_memory_type
from ..write.tenant_config import parse_tenant_config, parse_type_config, to_stored


class TenantSettingsService(RunService):
    def _require_admin(self) -> None:
        if not self.identity.admin:
            raise AdminRequired("changing write settings needs an admin grant")

    def configure(self, **settings: Any) -> dict[str, Any]:
        self._require_admin()
        tenant = self.identity.tenant
        # Read, merged and written under the store's lock: two admins configuring at once each
        # merge into the other's change instead of one overwriting it.
        with self.session.locked():
            merged = parse_tenant_config(settings, self.session.write_config(tenant).tenant)
            self._put_config(tenant, "", to_stored(merged))
        return to_stored(merged)

    def configure_type(self, memory_type: str, **settings: Any) -> dict[str, Any]:
        self._require_admin()
        memory_type = validate_memory_type(memory_type)
        tenant = self.identity.tenant
        with self.session.locked():  # as configure
            merged = parse_type_config(memory_type, settings, self.session.write_config(tenant).types.get(memory_type))
            self._put_config(tenant, memory_type, to_stored(merged))
        return to_stored(merged)

    def _put_config(self, tenant: str, memory_type: str, body: dict[str, Any]) -> None:
        now = self.session.clock.now()
        audit = audit_entry(
            self.identity.namespace(Scope.TENANT),
            f"config:{memory_type or '*'}",
            "configure",
            (),
            content_sha256(canonical_json(body)),
            self.identity.actor,
            now,
        )
        self.session.settings.put_write_config(tenant, memory_type, body, now, audit)
        self.session.forget_config(tenant)

    def ontology_set(self, markdown: str) -> Ontology:
        self._require_admin()
        ontology = parse_ontology(markdown)
        now = self.session.clock.now()
        identity = self.identity
        audit = audit_entry(
            identity.namespace(Scope.TENANT), "ontology", "ontology_set", (), ontology.sha256, identity.actor, now
        )
        version = self.session.settings.put_ontology(
            identity.tenant, markdown, ontology.sha256, now, identity.actor, audit
        )
        return dataclasses.replace(ontology, version=version)

    def ontology_get(self) -> Ontology | None:
        return ontology_of(self.session, self.identity.tenant)

    def placement(
        self, subject: str, subject_type: str, *, known_types: Iterable[str], profile_owner: str | None
    ) -> Placement:
        return placement(
            self.session, self.identity, subject, subject_type, known=known_types, profile_owner=profile_owner
        )

    def place_fact(self, subject: Any, subject_type: Any) -> Placement:
        return place_fact(self.session, self.identity, subject, subject_type)

    def known_types(self, subject: str) -> list[str]:
        return known_types(self.session, self.identity, subject)
