"""Structured profiles (pure): a per-namespace schema of profile properties, and each user's
profile built from their live facts, held to it and named by a digest of its sources
(docs/workers.md, ``structured_profile``)."""

from .build import (
    ABSENT,
    BEHIND,
    CURRENT,
    EMPTY,
    NO_SCHEMA,
    STALE,
    ProfileBody,
    StructuredProfile,
    build_profile,
    built_body,
    render_profile,
    source_digest,
    sources_of,
    status_of,
)
from .schema import (
    PROFILE_ACTOR,
    PROFILE_KEY,
    PROFILE_TYPE,
    PROPERTY_TYPES,
    ProfileProperty,
    ProfileSchema,
    ProfileSchemaInfo,
    canonical,
    parse_schema,
)

__all__ = [
    "ABSENT",
    "BEHIND",
    "CURRENT",
    "EMPTY",
    "NO_SCHEMA",
    "PROFILE_ACTOR",
    "PROFILE_KEY",
    "PROFILE_TYPE",
    "PROPERTY_TYPES",
    "STALE",
    "ProfileBody",
    "ProfileProperty",
    "ProfileSchema",
    "ProfileSchemaInfo",
    "StructuredProfile",
    "build_profile",
    "built_body",
    "canonical",
    "parse_schema",
    "render_profile",
    "source_digest",
    "sources_of",
    "status_of",
]
