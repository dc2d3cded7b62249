"""The tenant's settings on the Memory tool: write configuration, the ontology, and placement.

Writes are admin-only and audited; placement is a pure decision (``memory_core.placement``)."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Iterable

from .errors import AdminRequired, InvalidInput, MemcoreError
from .graph.model import entity_id
from .identity import Scope
from .placement import Ontology, Placement, parse_ontology
from .placement import decide as decide_placement
from .values import canonical_json, content_sha256
from .write.config import parse_tenant_config, parse_type_config, to_stored
from .write.point import audit_entry
from .write.settle import validate_memory_type

if TYPE_CHECKING:
    from .api import Memory


class TenantSettingsOps:
    _memory: "Memory"

    def _require_admin(self) -> None:
        if not self.identity.admin:  # type: ignore[attr-defined]
            raise AdminRequired("changing write settings needs an admin grant")

    def configure(self, **settings: Any) -> dict[str, Any]:
        """Change this tenant's write settings (policy, conflict_threshold, duplicate_threshold,
        char_limit, retention_days, sensitive_retention_days, blacklist, bulk_check_cap). Admin only."""
        self._require_admin()
        tenant = self.identity.tenant  # type: ignore[attr-defined]
        memory = self._memory
        merged = parse_tenant_config(settings, memory.write_config(tenant).tenant)
        self._put_config(tenant, "", to_stored(merged))
        return to_stored(merged)

    def configure_type(self, memory_type: str, **settings: Any) -> dict[str, Any]:
        """Change one memory type's settings (retype_to, dedup_threshold, retention_days, on_expire,
        embedded, key_identified). Admin only."""
        self._require_admin()
        memory_type = validate_memory_type(memory_type)
        tenant = self.identity.tenant  # type: ignore[attr-defined]
        merged = parse_type_config(memory_type, settings, self._memory.write_config(tenant).types.get(memory_type))
        self._put_config(tenant, memory_type, to_stored(merged))
        return to_stored(merged)

    def ontology_set(self, markdown: str) -> dict[str, Any]:
        """Store a new version of this tenant's ontology (Markdown; see ``placement``). Admin only."""
        self._require_admin()
        ontology = parse_ontology(markdown)
        memory, tenant = self._memory, self.identity.tenant  # type: ignore[attr-defined]
        now = memory.clock.now()
        audit = audit_entry(
            self.identity.namespace(Scope.TENANT),
            "ontology",
            "ontology_set",
            (),  # type: ignore[attr-defined]
            ontology.sha256,
            self.identity.actor,
            now,
        )  # type: ignore[attr-defined]
        version = memory.store.put_ontology(tenant, markdown, ontology.sha256, now, self.identity.actor, audit)  # type: ignore[attr-defined]
        return {
            "version": version,
            "sha256": ontology.sha256,
            "types": {
                t.name: {"memory_scope": t.memory_scope, "fields": [f for f, _ in t.fields]}
                for t in ontology.types.values()
            },
        }

    def ontology_get(self) -> Ontology | None:
        """This tenant's newest ontology, parsed, with its version (None when it has none)."""
        found = self._memory.store.ontology(self.identity.tenant)  # type: ignore[attr-defined]
        if found is None:
            return None
        version, markdown = found
        return dataclasses.replace(parse_ontology(markdown), version=version)

    def placement(
        self, subject: str, subject_type: str, *, known_types: Iterable[str] = (), profile_owner: str | None = None
    ) -> Placement:
        """Where a fact about ``subject`` of ``subject_type`` belongs for this run, and why."""
        for name, value in (("subject", subject), ("subject_type", subject_type)):
            if not isinstance(value, str) or not value.strip():
                raise InvalidInput(f"{name} must be a non-empty string", field=name)
        return decide_placement(
            self.ontology_get(),
            subject,
            subject_type,
            self.identity,  # type: ignore[attr-defined]
            known_types=known_types,
            profile_owner=profile_owner,
        )

    def place_fact(self, subject: Any, subject_type: Any) -> Placement:
        """The placement of a fact about ``subject``: the types the graph already gives the
        subject (in the user's scope and, when readable, the tenant's) count as known types."""
        if not isinstance(subject, str) or not isinstance(subject_type, str):
            raise InvalidInput(
                'scope="auto" needs subject and subject_type (the entity the fact is about)', field="subject"
            )
        return self.placement(subject, subject_type, known_types=self.known_types(subject))

    def known_types(self, subject: str) -> list[str]:
        """The entity types the graph gives ``subject`` in the scopes this run can read (user, tenant)."""
        store, identity, known = self._memory.store, self.identity, set()  # type: ignore[attr-defined]
        for scope in (Scope.USER, Scope.TENANT):
            try:
                namespace = identity.namespace(scope)
            except MemcoreError:
                continue  # a scope this run cannot read tells it nothing
            known.update(store.entity_types(namespace, entity_id(subject)))
        return sorted(known)

    def _put_config(self, tenant: str, memory_type: str, body: dict[str, Any]) -> None:
        memory = self._memory
        now = memory.clock.now()
        audit = audit_entry(
            self.identity.namespace(Scope.TENANT),
            f"config:{memory_type or '*'}",
            "configure",  # type: ignore[attr-defined]
            (),
            content_sha256(canonical_json(body)),
            self.identity.actor,
            now,
        )  # type: ignore[attr-defined]
        memory.store.put_write_config(tenant, memory_type, body, now, audit)
        memory._forget_config(tenant)
