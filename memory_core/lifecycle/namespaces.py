"""A namespace's own state: ``namespace_delete`` soft-deletes it, ``namespace_register`` brings it
back. Only the state changes; the rows of the namespace are never touched by either."""

from __future__ import annotations

from ..errors import MemcoreError

DELETED, REGISTERED = "deleted", "registered"


class NamespaceDeleted(MemcoreError):
    """The scope's namespace was soft-deleted (``namespace_delete``): nothing is written there
    until ``namespace_register`` brings it back."""

    status = 409
    code = "NAMESPACE_DELETED"
