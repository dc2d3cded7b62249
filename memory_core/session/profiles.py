"""Structured profiles as the services read them (the worker, ``MemoryTool.profile`` and
``get_context`` share this; services never call one another): the schema that applies to a user,
and the user's profile as stored beside their sources as they stand now."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from ..identity import Namespace, Scope
from ..model import FactVersion
from ..profiles import (
    NO_SCHEMA,
    PROFILE_KEY,
    STALE,
    ProfileBody,
    ProfileSchema,
    ProfileSchemaInfo,
    StructuredProfile,
    built_body,
    render_profile,
    source_digest,
    sources_of,
    status_of,
)
from .reads import live_keys

if TYPE_CHECKING:
    from .core import Session


def applied_schema(session: Session, tenant: str, user: str) -> ProfileSchemaInfo | None:
    """The user's own schema, else the tenant's, else None."""
    store = session.store.profiles
    return store.schema(Namespace(tenant, Scope.USER, user)) or store.schema(Namespace(tenant, Scope.TENANT, tenant))


@dataclass(frozen=True, slots=True)
class ProfileRead:
    namespace: Namespace
    info: ProfileSchemaInfo | None
    schema: ProfileSchema | None
    row: FactVersion | None  # the live profile row the worker wrote (None: none, or another actor's)
    built: ProfileBody | None
    sources: tuple[FactVersion, ...]
    digest: str
    status: str

    @property
    def text(self) -> str | None:
        if self.built is None:
            return None
        return render_profile(self.schema, self.built.properties, self.built.source_count)

    def answer(self) -> StructuredProfile:
        info, built, row = self.info, self.built, self.row
        return StructuredProfile(
            owner_id=self.namespace.owner_id,
            status=self.status,
            stale=self.status == STALE,
            properties=dict(built.properties) if built else {},
            text=self.text,
            schema_scope=info.scope if info else None,
            schema_version=info.version if info else None,
            schema_hash=info.schema_hash if info else None,
            built_schema_hash=built.schema_hash if built else None,
            sources_digest=built.sources_digest if built else None,
            source_count=built.source_count if built else 0,
            current_digest=self.digest,
            current_count=len(self.sources),
            fed_by=dict(built.fed_by) if built else {},
            fact_id=row.fact_id if row else None,
            version_id=row.id if row else None,
            content_sha256=row.content_sha256 if row else None,
            built_at=row.created_at if row else None,
        )


def read_profile(session: Session, namespace: Namespace, now: datetime) -> ProfileRead:
    """The user's profile and its sources as they stand at ``now`` (reads only)."""
    info = applied_schema(session, namespace.tenant, namespace.owner_id)
    schema = info.schema() if info is not None else None
    live = live_keys(session, namespace, now, None)
    held = [s for s in live if s.key == PROFILE_KEY]
    row = held[-1] if held else None  # the newest version of the key
    built = built_body(row)
    sources = tuple(sources_of(schema, live)) if schema is not None else ()
    digest = source_digest(sources)
    status = status_of(schema, built, digest, len(sources))
    if status == NO_SCHEMA:
        built = None  # a profile is served under the schema it answers to
    return ProfileRead(namespace, info, schema, row if built else None, built, sources, digest, status)
