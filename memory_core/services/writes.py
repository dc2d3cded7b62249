"""The writes of the Memory tool: ``set``, ``bulk_set`` and ``import_items``."""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from ..errors import InvalidInput
from ..identity import Scope
from ..model import Provenance, WriteResult
from ..session import RunService
from ..session.bulk import run_bulk, write_entries
from ..session.categories import add_new_category_links, refuse_unknown
from ..session.point import set_value
from ..write.batch import BulkResult, import_key, import_requests
from ..write.categories import item_categories
from ..write.request import SetRequest
from ..write.settle import entry_request

IMPORT_FIELDS = frozenset(
    {"text", "valid_at", "observed_at", "kind", "memory_type", "subject", "context", "sensitivity", "categories"}
)


class WritesService(RunService):
    def _provenance(self) -> Provenance:
        return Provenance.of(self.identity, self.origin)

    def set(self, key: str, value: Any, *, scope: str | Scope, dry_run: bool, **options: Any) -> WriteResult:
        return set_value(self.session, self.identity, self.origin, key, value, scope=scope, dry_run=dry_run, **options)

    def bulk_set(self, entries: Sequence[dict[str, Any]], *, scope: str | Scope, dry_run: bool) -> BulkResult:
        namespace = self.identity.namespace(scope)
        return write_entries(self.session, namespace, entries, self._provenance(), dry_run=dry_run)

    def import_items(self, items: Sequence[Any], *, scope: str | Scope, dry_run: bool) -> BulkResult:
        namespace = self.identity.namespace(scope)
        if isinstance(items, (str, bytes, dict)):
            raise InvalidInput("items must be a list", field="items")
        now, provenance = self.session.clock.now(), self._provenance()
        wanted: dict[str, tuple[str, ...]] = {}  # key -> the categories its items name

        def request(order: int, item: Any) -> SetRequest:
            body = {"text": item} if isinstance(item, str) else item
            if (
                not isinstance(body, dict)
                or not isinstance(body.get("text"), str)
                or not body["text"].strip()
                or set(body) - IMPORT_FIELDS
            ):
                raise InvalidInput(
                    f"item {order}: an item is a non-empty string or an object with text and "
                    f"any of {', '.join(sorted(IMPORT_FIELDS - {'text'}))}",
                    entry=order,
                )
            options = {k: v for k, v in body.items() if k not in ("text", "categories")}
            entry = {"key": import_key(body["text"]), "value": body["text"], **options}
            if "categories" in body:
                named = item_categories(body["categories"], order)
                wanted[entry["key"]] = tuple(dict.fromkeys((*wanted.get(entry["key"], ()), *named)))
            return entry_request(namespace, order, entry, provenance, now, source_class="imported", reinforce=False)

        to_write, left = [], []
        for req in import_requests(list(items), request):
            head = self.session.versions.head(namespace, req.key)
            if head is not None and head.status not in ("active", "conflicted"):
                left.append(req.key)  # deleted, retired, rejected or proposed: the owner's call stands
            else:
                to_write.append(req)
        # An unknown category refuses the import before anything is written.
        refuse_unknown(self.session, namespace, sorted({c for named in wanted.values() for c in named}))
        result = run_bulk(self.session, to_write, check_cap=len(to_write), dry_run=dry_run, operation="import")
        if not dry_run:  # only pairs never stored: a category link the owner rescinded stays rescinded
            add_new_category_links(self.session, namespace, wanted, provenance.actor, "import")
        return dataclasses.replace(result, left_as_is=tuple(left), dry_run=dry_run)
