"""``memcore``: the Memory tool from a shell.

Every command takes ``--json`` and then prints exactly one JSON document on stdout. An error
prints ``{"error": {"code", "status", "message"}}``, exits non-zero, and changes nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn, Sequence

from ..adapters.duckdb import DB_FILE
from ..api import Memory, MemoryTool
from ..environment import resolve_embedder, resolve_home
from ..errors import IdentityIncomplete, InvalidInput, MemcoreError
from ..identity import Identity
from ..model import FactVersion, WriteResult
from ..temporal import iso
from .verbs_extract import EXTRACT_READ_VERBS, EXTRACT_WRITE_VERBS, add_extract_verbs, run_extract_verb
from .verbs_write import NO_IDENTITY, OTHER_VERBS, WRITE_VERBS, add_set_options, add_verbs, run_verb, set_options

EXIT_ERROR = 1
EXIT_USAGE = 2


class UsageError(InvalidInput):
    status = 400
    code = "USAGE"


class DataNotFound(MemcoreError):
    status = 404
    code = "DATA_NOT_FOUND"


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print usage and exit 2 on its own
        raise UsageError(f"{self.prog}: {message}")


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print exactly one JSON document on stdout"
    )


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="memcore", description="The memory_core Memory tool.")
    p.add_argument("--home", help="memory home folder (default: $MEMCORE_HOME, else ./.memory)")
    p.add_argument("--tenant", help="run identity: tenant")
    p.add_argument("--user", help="run identity: user (the subject)")
    p.add_argument("--agent", help="run identity: agent")
    p.add_argument("--session", help="run identity: session")
    p.add_argument("--run", help="run identity: run id")
    p.add_argument("--model", help="run identity: model that produced the writes")
    p.add_argument("--admin", action="store_true", help="admin grant (needed for scope global)")
    p.add_argument(
        "--embedder",
        help="static | minilm | hashing | openai | none (default: $MEMCORE_EMBEDDER, else static); none keeps no index",
    )
    p.add_argument("--embedder-base-url", help="openai embedder: base URL of the endpoint")
    p.add_argument("--embedder-model", help="openai embedder: model name")
    p.add_argument("--embedder-dim", type=int, help="openai embedder: vector dimension")
    _json_flag(p)
    sub = p.add_subparsers(dest="op", required=True, parser_class=_Parser, metavar="OP")

    def op(name: str, help_text: str, key: bool = True) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_text, description=help_text)
        if key:
            sp.add_argument("key")
        if name not in {
            "audit",
            "index",
            "sweep-expired",
            "configure",
            "configure-type",
            "ontology-set",
            "ontology-get",
            "place",
            "work-queue",
            "resolve",
        }:
            sp.add_argument(
                "--scope",
                default="user",
                help="agent | user | tenant | global (default: user)"
                + (
                    "; auto: placed by the tenant ontology (needs --subject and --subject-type)"
                    if name == "set"
                    else ""
                ),
            )
        _json_flag(sp)
        return sp

    s = op("set", "state a value under a key")
    s.add_argument("value", help="a JSON value; text that is not JSON is stored as a string")
    s.add_argument("--string", action="store_true", help="store VALUE as a string even if it parses as JSON")
    s.add_argument("--valid-at", help="when it became true (ISO-8601 with zone; default now)")
    s.add_argument("--invalid-at", help="when it stops being true (may be in the future)")
    s.add_argument("--observed-at", help="when it was said")
    s.add_argument("--type", dest="memory_type", default="general", help="memory_type (default: general)")
    s.add_argument("--kind", default="fact", help="fact | note | document (default: fact)")
    add_set_options(s)
    for name, text in (
        ("get", "the value live now, or at --as-of, as known at --known-at"),
        ("list", "every key with a live value"),
    ):
        g = op(name, text, key=(name == "get"))
        g.add_argument("--as-of", help="valid time to read at (default: now, or --known-at)")
        g.add_argument("--known-at", help="transaction time: what the store held at that instant")
    op("delete", "tombstone a key (recoverable with restore)")
    op("restore", "undo the key's latest change when it retired the value (delete, reject, expiry, ...)")
    add_verbs(op)
    add_extract_verbs(op)
    op("history", "every version of a key, oldest first")
    for name, text, default in (
        ("recall", "what have I been told about QUERY (facts and notes)", "fact,note"),
        ("search", "where did I record QUERY (every plane)", "fact,note,document"),
    ):
        r = op(name, text, key=False)
        r.add_argument("query")
        r.add_argument("--k", type=int, default=10, help="hits to return (default 10)")
        r.add_argument("--recipe", default="hybrid_rrf", help="hybrid_rrf | hybrid_lexical | vector_only | bm25_only")
        r.add_argument("--as-of", help="valid time to search at (default now)")
        r.add_argument("--sources", default=default, help=f"comma-separated kinds (default {default})")
        r.add_argument("--observed-from", help="only rows observed at or after this instant")
        r.add_argument("--observed-to", help="only rows observed before this instant")
        r.add_argument("--token-budget", type=int, help="cut the hits to about this many tokens")
    a = op("audit", "check the hash-chained audit log", key=False)
    a.add_argument("action", choices=["verify"])
    ev = sub.add_parser("eval", help="run an evaluation and write its report (evals/)")
    _json_flag(ev)
    ev.add_argument(
        "suite",
        choices=["locomo", "coref", "observations", "resolver"],
        help="locomo: retrieval recall@k; coref: per-span vs whole-batch extraction (MuDoCo and "
        "synthetic, McNemar); observations: extraction recall against LoCoMo observations; "
        "resolver: the conflict resolver's calibration on labelled pairs",
    )
    ev.add_argument("--data", help="the corpus file or folder (default: ../shared/corpora/<locomo|mudoco>)")
    ev.add_argument(
        "--runs",
        help="locomo: comma-separated runs: bm25_only, static, minilm, hybrid(static), "
        "hybrid(minilm), or EMBEDDER:RECIPE (default: all named runs)",
    )
    ev.add_argument(
        "--embedder",
        dest="eval_embedder",
        default="static",
        help="observations: the embedder that matches facts to observations (default static)",
    )
    ev.add_argument("--out", help="report folder (default: <home>/reports/<suite>)")
    ev.add_argument("--limit", type=int, help="only the first N conversations (for a quick look)")
    ix = op("index", "the retrieval index: status, optimize, repair, rebuild", key=False)
    ix.add_argument("action", choices=["status", "optimize", "repair", "rebuild"])
    return p


def _identity(args: argparse.Namespace) -> Identity:
    if not args.tenant:
        raise IdentityIncomplete("--tenant is required for memory operations")
    return Identity(
        tenant=args.tenant,
        user=args.user,
        agent=args.agent,
        session=args.session,
        run=args.run,
        model=args.model,
        admin=args.admin,
    )


def _fact_line(v: FactVersion) -> str:
    until = f" until {iso(v.invalid_at)}" if v.invalid_at else ""
    return f"{v.key} = {v.value_json}  (valid from {iso(v.valid_at)}{until}; v{v.version}, {v.status.value})"


@contextmanager
def _no_trace_if_refused(home: Path, writes: bool) -> Iterator[None]:
    """A refused write leaves no trace: not even the empty store that opening a new home creates."""
    home_existed, db_existed = home.exists(), (home / DB_FILE).exists()
    try:
        yield
    except MemcoreError:
        if writes and not db_existed:
            if not home_existed:
                shutil.rmtree(home, ignore_errors=True)
            else:
                for leftover in (home / DB_FILE, home / f"{DB_FILE}.wal"):
                    leftover.unlink(missing_ok=True)
        raise


def _run(args: argparse.Namespace) -> tuple[Any, str, int]:
    """Execute one op; return (JSON document, human text, exit code)."""
    home = resolve_home(args.home)
    with _no_trace_if_refused(home, args.op in WRITE_VERBS | EXTRACT_WRITE_VERBS):
        return _run_in(args, home)


def _run_in(args: argparse.Namespace, home: Path) -> tuple[Any, str, int]:
    if args.op == "eval":
        from .verbs_eval import run_eval  # evals and corpora sit beside the library: only this verb needs them

        return run_eval(args, home)
    writes = args.op in WRITE_VERBS | EXTRACT_WRITE_VERBS
    # Refuse before touching the home.
    identity = None if args.op in {"audit", "index", "work-queue", "resolve", *NO_IDENTITY} else _identity(args)
    embedder = resolve_embedder(args.embedder)
    options = {
        k: v
        for k, v in (("base_url", args.embedder_base_url), ("model", args.embedder_model), ("dim", args.embedder_dim))
        if v
    }
    with Memory.open(home, create=writes, embedder=None if embedder == "none" else embedder, **options) as memory:
        if args.op == "audit":
            report = memory.verify_audit()
            text = f"audit chain ok ({report.rows} rows)" if report.ok else f"audit chain BROKEN: {report.problem}"
            return {"audit": report.to_dict(), "home": str(home)}, text, 0 if report.ok else EXIT_ERROR
        if args.op == "index":
            return _index_op(memory, args.action)
        if args.op in EXTRACT_WRITE_VERBS | EXTRACT_READ_VERBS:
            tool = memory.for_run(identity, origin="memcore.cli") if identity else None
            return run_extract_verb(memory, tool, args)
        if args.op in NO_IDENTITY:
            return run_verb(memory, None, args)
        tool: MemoryTool = memory.for_run(identity, origin="memcore.cli")
        if args.op in WRITE_VERBS - {"set", "delete", "restore"} or args.op in OTHER_VERBS:
            return run_verb(memory, tool, args)
        if args.op in {"recall", "search"}:
            found = getattr(tool, args.op)(
                args.query,
                scope=args.scope,
                k=args.k,
                recipe=args.recipe,
                as_of=args.as_of,
                sources=[s for s in args.sources.split(",") if s.strip()],
                observed_from=args.observed_from,
                observed_to=args.observed_to,
                token_budget=args.token_budget,
            )
            lines = [f"verdict: {found.verdict}" + ("" if found.sources_applied else "  (sources not fully applied)")]
            lines += [
                f"{i}. [{h.kind.value}] {h.key} = {json.dumps(h.value, ensure_ascii=False)}  "
                + " ".join(f"{leg}#{s.rank}:{s.score:.3f}" for leg, s in h.legs.items())
                for i, h in enumerate(found.hits, start=1)
            ]
            lines += [f"note: {n}" for n in found.notes]
            return found.to_dict(), "\n".join(lines), 0
        if args.op == "set":
            value: Any = args.value
            if not args.string:
                try:
                    value = json.loads(args.value)
                except json.JSONDecodeError:
                    value = args.value
            result = tool.set(
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
            line = _fact_line(result.version) if result.version else args.key
            if "merged_into" in result.details:
                line = f"{args.key} -> {result.details['merged_into']} (no new row; that fact was reinforced)"
            suffix = " (dry run: nothing written)" if args.dry_run else ""
            if "placement" in result.details:
                placed = result.details["placement"]
                suffix += f"\nplaced in scope {placed['scope']}: {placed['reason']} ({placed['detail']})"
            return result.to_dict(), f"{result.verdict}: {line}{suffix}", 0
        if args.op in {"delete", "restore"}:
            result: WriteResult = getattr(tool, args.op)(args.key, scope=args.scope)
            return result.to_dict(), f"{result.verdict}: {args.key} ({len(result.rows)} version rows)", 0
        if args.op == "get":
            fact = tool.get(args.key, scope=args.scope, as_of=args.as_of, known_at=args.known_at)
            doc = {"key": args.key, "found": fact is not None, "fact": fact.to_dict() if fact else None}
            return doc, _fact_line(fact) if fact else f"{args.key}: no live value", 0
        if args.op == "list":
            facts = tool.list(scope=args.scope, as_of=args.as_of, known_at=args.known_at)
            text = "\n".join(_fact_line(f) for f in facts) or "(no live values)"
            return {"scope": args.scope, "count": len(facts), "facts": [f.to_dict() for f in facts]}, text, 0
        rows = tool.history(args.key, scope=args.scope)
        text = "\n".join(f"v{r.version} {r.op.value:<9} {r.status.value:<10} {_fact_line(r)}" for r in rows)
        return {"key": args.key, "versions": [r.to_dict() for r in rows]}, text, 0


def _index_op(memory: Memory, action: str) -> tuple[Any, str, int]:
    projector = memory.projector
    if action == "rebuild":
        doc = {"action": action, "rows": memory.reindex()}
    elif action == "repair":
        doc = {"action": action, "repaired": memory.repair_projections()}
    elif action == "optimize":
        doc = {"action": action, **projector.optimize()}
    else:
        doc = {"action": action, **projector.status()}
    return doc, " ".join(f"{k}={v}" for k, v in doc.items()), 0


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    want_json = "--json" in argv
    try:
        args = build_parser().parse_args(argv)
        doc, text, code = _run(args)
    except MemcoreError as exc:
        if want_json:
            out(json.dumps({"error": exc.to_dict()}, ensure_ascii=False))
        else:
            print(f"memcore: error [{exc.code}]: {exc.message}", file=sys.stderr)
        return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_ERROR
    out(json.dumps(doc, ensure_ascii=False) if want_json else text)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
