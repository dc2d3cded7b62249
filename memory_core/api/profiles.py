"""Structured profiles on the Memory tool (``MemoryTool`` lists each op in its class body) and the
worker that builds them (``Memory.build_profiles``): docs/workers.md, ``structured_profile``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from ..identity import Scope
from ..profiles import ProfileSchemaInfo, StructuredProfile
from ..services.profiles import ProfileService, StructuredProfiles

if TYPE_CHECKING:
    from .memory import Memory


def profile_schema_set(self, properties: Mapping[str, Any], *, scope: str | Scope = Scope.TENANT) -> ProfileSchemaInfo:
    """Set the profile schema of the tenant (admin; it applies to every user) or of your own user
    scope (it replaces the tenant's for you): ``properties`` maps each property name to {type
    (string, number, integer, boolean, array), description, from: {memory_types, keys (glob
    patterns)}, max_items (arrays)}. Checked whole (a bad schema stores nothing); each change is
    a new, audited version."""
    return self._bound(ProfileService).schema_set(properties, scope)


def profile_schema(self, *, scope: str | Scope = Scope.TENANT) -> ProfileSchemaInfo | None:
    """The newest profile schema of the tenant or of your user scope (None: none set there)."""
    return self._bound(ProfileService).schema(scope)


def profile(self) -> StructuredProfile:
    """Your structured profile as last built, and whether it is still what your facts say: its
    sources' digest and the schema's hash are recomputed now (``status``: current, stale, absent,
    empty, no_schema); nothing is written."""
    return self._bound(ProfileService).profile()


def build_profiles(self: Memory, *, apply: bool = True) -> dict[str, Any]:
    """Build the structured profile of every user a schema applies to whose profile is absent or
    stale (its sources' digest or the schema changed), through the write path as
    ``worker:structured-profile``; a current one is left as it is. Counts by status, and the users
    that were behind. ``apply=False`` writes nothing."""
    return StructuredProfiles(self.session).run(apply=apply)
