"""``import_items`` on the Memory tool: texts imported under digest keys, oldest first."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import InvalidInput
from ..identity import Scope
from .bulk import BulkResult, import_key, import_requests, run_bulk
from .settle import entry_request

if TYPE_CHECKING:
    from ..api import Memory


class ImportOps:
    _memory: "Memory"

    def import_items(
        self, items: Sequence[Any], *, scope: str | Scope = Scope.USER, dry_run: bool = False
    ) -> BulkResult:
        """Import texts (strings, or {"text", and valid_at / observed_at / kind / memory_type / subject})
        under digest keys (``import:`` + 24 hex), source_class imported, oldest first. A key that
        already holds the text is unchanged, a key whose newest version is not live is left as it
        is, and a re-run reinforces nothing."""
        namespace = self.identity.namespace(scope)  # type: ignore[attr-defined]
        if isinstance(items, (str, bytes, dict)):
            raise InvalidInput("items must be a list", field="items")
        now, provenance = self._now(), self._provenance()  # type: ignore[attr-defined]
        allowed = {"text", "valid_at", "observed_at", "kind", "memory_type", "subject", "context", "sensitivity"}

        def request(order: int, item: Any):
            body = {"text": item} if isinstance(item, str) else item
            if (
                not isinstance(body, dict)
                or not isinstance(body.get("text"), str)
                or not body["text"].strip()
                or set(body) - allowed
            ):
                raise InvalidInput(
                    f"item {order}: an item is a non-empty string or an object with text and "
                    f"any of {', '.join(sorted(allowed - {'text'}))}",
                    entry=order,
                )
            options = {k: v for k, v in body.items() if k != "text"}
            return entry_request(
                namespace,
                order,
                {"key": import_key(body["text"]), "value": body["text"], **options},
                provenance,
                now,
                source_class="imported",
                reinforce=False,
            )

        to_write, left = [], []
        for req in import_requests(list(items), request):
            states = self._memory.store.fact_states(namespace, req.key)
            if states and max(states, key=lambda s: s.version).status.value not in ("active", "conflicted"):
                left.append(req.key)  # deleted, retired, rejected or proposed: the owner's call stands
            else:
                to_write.append(req)
        result = run_bulk(
            self._memory.write_context(), to_write, check_cap=len(to_write), dry_run=dry_run, operation="import"
        )
        return dataclasses.replace(result, left_as_is=tuple(left), dry_run=dry_run)
