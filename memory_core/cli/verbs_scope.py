"""Scope-wide ops: clear a scope (and undo it), delete a namespace and register it again, promote
a fact into a shared scope, and decide a proposal."""

from __future__ import annotations

from typing import Any

from ..model import WriteResult
from .io import write_line
from .registry import Call, Output, arg, verb


def _keys(result: WriteResult, name: str) -> str:
    keys = result.details.get(name) or []
    return f"{len(keys)} {name.replace('_', ' ')}" + (f" ({', '.join(keys)})" if keys else "")


@verb(
    "clear",
    "tombstone every live key of the scope but the locked ones, as one undoable change",
    arg("--dry-run", action="store_true", help="name the keys it would clear, write nothing"),
    writes=True,
)
def clear(call: Call) -> Output:
    result = call.tool.clear(scope=call.args.scope, dry_run=call.args.dry_run)
    text = f"{result.verdict}: {_keys(result, 'cleared')}, {_keys(result, 'kept_locked')}"
    if result.rows:
        text += f"\nchange {result.details['change_id']} (clear-undo {result.details['change_id']} brings them back)"
    return result.to_dict(), text, 0


@verb(
    "clear-undo",
    "bring back what a clear tombstoned (keys changed since stay as they are)",
    arg("change_id", help="the change id the clear answered"),
    writes=True,
)
def clear_undo(call: Call) -> Output:
    result = call.tool.clear_undo(call.args.change_id, scope=call.args.scope)
    return result.to_dict(), f"{result.verdict}: {_keys(result, 'restored')}, {_keys(result, 'changed_since')}", 0


def _state_line(doc: dict[str, Any]) -> str:
    was = "" if doc["changed"] else " (already so)"
    return f"{doc['scope']} namespace {doc['owner_id']}: {doc['state']}{was}"


@verb(
    "namespace-delete",
    "soft-delete the scope's namespace: reads answer empty, workers skip it, writes are refused",
    writes=True,
)
def namespace_delete(call: Call) -> Output:
    doc = call.tool.namespace_delete(scope=call.args.scope)
    return doc, _state_line(doc), 0


@verb("namespace-register", "bring a deleted namespace back with everything as it was", writes=True)
def namespace_register(call: Call) -> Output:
    doc = call.tool.namespace_register(scope=call.args.scope)
    return doc, _state_line(doc), 0


@verb(
    "promote",
    "copy the key's live fact into a shared scope, with lineage back to it",
    arg("--to-scope", default="tenant", help="the scope to copy into (default: tenant)"),
    key=True,
    writes=True,
)
def promote(call: Call) -> Output:
    result = call.tool.promote(call.args.key, scope=call.args.scope, to_scope=call.args.to_scope)
    return result.to_dict(), f"{write_line(result)} in scope {result.details['to_scope']}", 0


@verb(
    "proposal-decide",
    "accept the key's proposal as an established fact, or --reject it",
    arg("--reject", action="store_true", help="reject the proposal instead (restore undoes it)"),
    key=True,
    writes=True,
)
def proposal_decide(call: Call) -> Output:
    result = call.tool.proposal_decide(call.args.key, scope=call.args.scope, accept=not call.args.reject)
    return result.to_dict(), write_line(result), 0
