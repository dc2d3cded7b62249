"""What structured profiles keep beside the log: each namespace's profile schema, versioned (the
profiles themselves are memory rows, written through the write path)."""

from __future__ import annotations

from typing import Protocol

from ..audit import AuditEntry
from ..identity import Namespace
from ..profiles import ProfileSchemaInfo


class ProfileSchemaStore(Protocol):
    def put_schema(self, schema: ProfileSchemaInfo, audit: AuditEntry) -> int:
        """Append a new version of the namespace's schema (audited; earlier ones are kept) and
        answer its version (``schema.version`` is ignored)."""
        ...

    def schema(self, namespace: Namespace) -> ProfileSchemaInfo | None:
        """The namespace's newest schema, or None."""
        ...

    def schema_versions(self, namespace: Namespace) -> list[ProfileSchemaInfo]:
        """Every version of the namespace's schema, oldest first."""
        ...

    def schema_namespaces(self) -> list[Namespace]:
        """Every namespace with a schema."""
        ...
