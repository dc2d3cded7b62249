"""SQL memory on the Memory tool: one sandboxed database per scope (``sql_scopes`` grant)."""

from __future__ import annotations

from typing import Any, Sequence

from ..identity import Scope
from ..ports import SqlResult
from ..session import RunService
from ..session.holds import refuse_held


class SqlService(RunService):
    def run(
        self,
        statement: str,
        params: Sequence[Any] | dict[str, Any] | None,
        *,
        scope: str | Scope,
        query_only: bool,
    ) -> SqlResult:
        namespace = self.identity.sql_namespace(scope)
        if not query_only:  # an erasure holding the scope is about to delete its database
            refuse_held(self.session.store, [namespace])
        return self.session.sql.run(namespace, statement, params, query_only=query_only)
