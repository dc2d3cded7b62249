"""The verbs of facts: set, get, list, history, delete, restore, recall and search."""

from __future__ import annotations

import json
from typing import Any

from ..errors import InvalidInput, ValueTooDeep
from ..model import WriteResult
from ..retrieval.recipes import DEFAULT_RECIPE, RECIPES
from .io import AS_OF, KNOWN_AT, SET_OPTION_ARGS, fact_line, loads, set_options
from .registry import Call, Output, arg, verb


@verb(
    "set",
    "state a value under a key",
    arg("value", help="a JSON value; text that is not JSON is stored as a string"),
    arg("--string", action="store_true", help="store VALUE as a string even if it parses as JSON"),
    arg("--valid-at", help="when it became true (ISO-8601 with zone; default now)"),
    arg("--invalid-at", help="when it stops being true (may be in the future)"),
    arg("--observed-at", help="when it was said"),
    arg("--type", dest="memory_type", default="general", help="memory_type (default: general)"),
    arg("--kind", default="fact", help="fact | note | document (default: fact)"),
    *SET_OPTION_ARGS,
    key=True,
    writes=True,
    scope_help="; auto: placed by the tenant ontology (needs --subject and --subject-type)",
)
def set_(call: Call) -> Output:
    args = call.args
    value: Any = args.value
    if not args.string:
        try:
            value = loads(args.value, "VALUE", "value")
        except ValueTooDeep:
            raise
        except InvalidInput:  # text that is not JSON is stored as a string
            value = args.value
    result = call.tool.set(
        args.key,
        value,
        scope=args.scope,
        kind=args.kind,
        memory_type=args.memory_type,
        valid_at=args.valid_at,
        invalid_at=args.invalid_at,
        observed_at=args.observed_at,
        dry_run=args.dry_run,
        **set_options(args),
    )
    line = fact_line(result.version) if result.version else args.key
    if "merged_into" in result.details:
        line = f"{args.key} -> {result.details['merged_into']} (no new row; that fact was reinforced)"
    suffix = " (dry run: nothing written)" if args.dry_run else ""
    if "placement" in result.details:
        placed = result.details["placement"]
        suffix += f"\nplaced in scope {placed['scope']}: {placed['reason']} ({placed['detail']})"
    return result.to_dict(), f"{result.verdict}: {line}{suffix}", 0


@verb("get", "the value live now, or at --as-of, as known at --known-at", AS_OF, KNOWN_AT, key=True)
def get(call: Call) -> Output:
    args = call.args
    fact = call.tool.get(args.key, scope=args.scope, as_of=args.as_of, known_at=args.known_at)
    doc = {"key": args.key, "found": fact is not None, "fact": fact.to_dict() if fact else None}
    return doc, fact_line(fact) if fact else f"{args.key}: no live value", 0


@verb("list", "every key with a live value", AS_OF, KNOWN_AT)
def list_(call: Call) -> Output:
    args = call.args
    facts = call.tool.list(scope=args.scope, as_of=args.as_of, known_at=args.known_at)
    text = "\n".join(fact_line(f) for f in facts) or "(no live values)"
    return {"scope": args.scope, "count": len(facts), "facts": [f.to_dict() for f in facts]}, text, 0


@verb("history", "every version of a key, oldest first", key=True)
def history(call: Call) -> Output:
    args = call.args
    rows = call.tool.history(args.key, scope=args.scope)
    text = "\n".join(f"v{r.version} {r.op.value:<9} {r.status.value:<10} {fact_line(r)}" for r in rows)
    return {"key": args.key, "versions": [r.to_dict() for r in rows]}, text, 0


@verb("delete", "tombstone a key (recoverable with restore)", key=True, writes=True)
def delete(call: Call) -> Output:
    return _key_changed(call.tool.delete(call.args.key, scope=call.args.scope))


@verb(
    "restore",
    "undo the key's latest change when it retired the value (delete, reject, expiry, ...)",
    key=True,
    writes=True,
)
def restore(call: Call) -> Output:
    return _key_changed(call.tool.restore(call.args.key, scope=call.args.scope))


def _key_changed(result: WriteResult) -> Output:
    return result.to_dict(), f"{result.verdict}: {result.key} ({len(result.rows)} version rows)", 0


def _search_args(default: str) -> tuple:
    return (
        arg("query"),
        arg("--k", type=int, default=10, help="hits to return (default 10)"),
        arg("--recipe", default=DEFAULT_RECIPE, help=f"{' | '.join(RECIPES)} (default: {DEFAULT_RECIPE})"),
        arg("--as-of", help="valid time to search at (default now)"),
        arg("--sources", default=default, help=f"comma-separated kinds (default {default})"),
        arg("--observed-from", help="only rows observed at or after this instant"),
        arg("--observed-to", help="only rows observed before this instant"),
        arg("--token-budget", type=int, help="cut the hits to about this many tokens"),
        arg("--cursor", help="the next_cursor a search answered: its next page (same query, recipe, sources)"),
    )


def _found(call: Call, op: str) -> Output:
    args = call.args
    found = getattr(call.tool, op)(
        args.query,
        scope=args.scope,
        k=args.k,
        recipe=args.recipe,
        as_of=args.as_of,
        sources=[s for s in args.sources.split(",") if s.strip()],
        observed_from=args.observed_from,
        observed_to=args.observed_to,
        token_budget=args.token_budget,
        cursor=args.cursor,
    )
    lines = [f"verdict: {found.verdict}" + ("" if found.sources_applied else "  (sources not fully applied)")]
    lines += [
        f"{i}. [{h.kind.value}] {h.key} = {json.dumps(h.value, ensure_ascii=False)}  "
        + " ".join(f"{leg}#{s.rank}:{s.score:.3f}" for leg, s in h.legs.items())
        for i, h in enumerate(found.hits, start=1)
    ]
    lines += [f"note: {n}" for n in found.notes]
    if found.next_cursor and call.memory is None:  # through a service, which keeps the search
        lines.append(f"next page: --cursor {found.next_cursor}")
    return found.to_dict(), "\n".join(lines), 0


@verb("recall", "what have I been told about QUERY (facts and notes)", *_search_args("fact,note"))
def recall(call: Call) -> Output:
    return _found(call, "recall")


@verb("search", "where did I record QUERY (every plane)", *_search_args("fact,note,document"))
def search(call: Call) -> Output:
    return _found(call, "search")
