"""SQL memory on the Memory tool: one sandboxed database per scope (``sql_scopes`` grant)."""

from __future__ import annotations

from typing import Any, Sequence

from ..identity import Scope
from ..ports import SqlResult
from ..session import RunService


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
        return self.session.sql.run(namespace, statement, params, query_only=query_only)
