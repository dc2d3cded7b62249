"""By-id ops: get-by-id, update-by-id and verify, each addressing a row by its version or fact id;
and update, the revision of a key's live row that keeps its fact id (never creating one)."""

from __future__ import annotations

import argparse
from typing import Any

from ..errors import InvalidInput, ValueTooDeep
from ..model import WriteResult
from ..temporal import iso
from .io import AS_OF, KNOWN_AT, SET_OPTION_ARGS, fact_line, loads, set_options
from .registry import Call, Output, arg, verb

# The set options a revision takes (``MemoryTool.update``): what it states and how sure.
_REVISION_FLAGS = ("--subject", "--context", "--if-match", "--sensitivity", "--confidence", "--relation")
REVISION_ARGS = tuple(a for a in SET_OPTION_ARGS if a.flags[0] in _REVISION_FLAGS)
VALUE_ARGS = (
    arg("value", help="a JSON value; text that is not JSON is stored as a string"),
    arg("--string", action="store_true", help="store VALUE as a string even if it parses as JSON"),
)


def _value(args: Any) -> Any:
    if args.string:
        return args.value
    try:
        return loads(args.value, "VALUE", "value")
    except ValueTooDeep:
        raise
    except InvalidInput:  # text that is not JSON is stored as a string
        return args.value


def _revision_options(args: Any) -> dict[str, Any]:
    """The revision's options as ``set_options`` reads them (the flags ``update`` does not take
    are absent from its parser: read as not given)."""
    names = ("subject", "context", "pin", "proposed", "if_match_sha256", "ttl_seconds", "on_expire")
    names += ("sensitivity", "source_class", "confidence", "subject_type", "relations")
    full = argparse.Namespace(**{n: getattr(args, n, None) for n in names})
    return set_options(full)


def _written(result: WriteResult) -> Output:
    version = result.version
    line = fact_line(version) if version else result.key
    fact = f" [fact {result.details['fact_id']}]" if "fact_id" in result.details else ""
    judged = version.provenance if version is not None and result.verdict == "verified" else None
    by = f"\njudged by {judged.judged_by} at {iso(judged.judged_at)}" if judged is not None else ""
    return result.to_dict(), f"{result.verdict}: {line}{fact}{by}", 0


@verb(
    "get-by-id",
    "the row an id names (a fact id: the fact as get serves it; a version id: that row)",
    arg("id", help="a fact id or a version id, from any scope this run reads"),
    AS_OF,
    KNOWN_AT,
    scope=False,
)
def get_by_id(call: Call) -> Output:
    args = call.args
    row = call.tool.get_by_id(args.id, as_of=args.as_of, known_at=args.known_at)
    where = f"{row.scope.value} {row.op.value} {row.status.value} [fact {row.fact_id}, version {row.id}]"
    return {"id": args.id, "fact": row.to_dict()}, f"{fact_line(row)}\n{where}", 0


@verb(
    "update",
    "revise the key's live value, keeping its fact id (never creates: see set)",
    *VALUE_ARGS,
    *REVISION_ARGS,
    key=True,
    writes=True,
)
def update(call: Call) -> Output:
    args = call.args
    return _written(call.tool.update(args.key, _value(args), scope=args.scope, **_revision_options(args)))


@verb(
    "update-by-id",
    "revise the live fact an id names, keeping its fact id",
    arg("id", help="a fact id, or a version id naming its fact"),
    *VALUE_ARGS,
    *REVISION_ARGS,
    scope=False,
    writes=True,
)
def update_by_id(call: Call) -> Output:
    args = call.args
    return _written(call.tool.update_by_id(args.id, _value(args), **_revision_options(args)))


@verb(
    "verify",
    "affirm a live row as a reviewer: its provenance names you (judged_by) and when (judged_at)",
    arg("key", nargs="?", help="the key of the row (or give --id)"),
    arg("--id", dest="row_id", help="the row's fact id or version id, instead of KEY"),
    writes=True,
)
def verify(call: Call) -> Output:
    args = call.args
    return _written(call.tool.verify(args.key, id=args.row_id, scope=args.scope))
