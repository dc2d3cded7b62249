"""The Memory tool's ops on the tenant's settings (``MemoryTool`` lists each in its class body):
write configuration and the ontology (admin, audited), and placement (a pure decision)."""

from __future__ import annotations

from typing import Any, Iterable

from ..placement import Ontology, Placement
from ..services.tenant_settings import TenantSettingsService


def configure(self, **settings: Any) -> dict[str, Any]:
    """Change this tenant's write settings (admin only): policy, thresholds, char_limit, retention,
    blacklist (RE2 patterns), bulk_check_cap, single_valued, the resolver's (``docs/write-path.md``)."""
    return self._bound(TenantSettingsService).configure(**settings)


def configure_type(self, memory_type: str, **settings: Any) -> dict[str, Any]:
    """Change one memory type's settings (retype_to, dedup_threshold, retention_days, on_expire,
    embedded, key_identified). Admin only."""
    return self._bound(TenantSettingsService).configure_type(memory_type, **settings)


def ontology_set(self, markdown: str) -> Ontology:
    """Store a new version of this tenant's ontology (Markdown; see ``placement``). Admin only."""
    return self._bound(TenantSettingsService).ontology_set(markdown)


def ontology_get(self) -> Ontology | None:
    """This tenant's newest ontology, parsed, with its version (None when it has none)."""
    return self._bound(TenantSettingsService).ontology_get()


def placement(
    self,
    subject: str,
    subject_type: str,
    *,
    known_types: Iterable[str] = (),
    profile_owner: str | None = None,
) -> Placement:
    """Where a fact about ``subject`` of ``subject_type`` belongs for this run, and why."""
    return self._bound(TenantSettingsService).placement(
        subject, subject_type, known_types=known_types, profile_owner=profile_owner
    )


def place_fact(self, subject: Any, subject_type: Any) -> Placement:
    """The placement of a fact about ``subject``: the types the graph already gives the
    subject (in the user's scope and, when readable, the tenant's) count as known types."""
    return self._bound(TenantSettingsService).place_fact(subject, subject_type)


def known_types(self, subject: str) -> list[str]:
    """The entity types the graph gives ``subject`` in the scopes this run may read."""
    return self._bound(TenantSettingsService).known_types(subject)


OPS = (configure, configure_type, ontology_set, ontology_get, placement, place_fact, known_types)
