"""``memcore``: the Memory tool from a shell.

Every verb is one registered function (``registry``) in the ``verbs_*`` modules. Every command
takes ``--json`` and then prints exactly one JSON document on stdout. An error prints
``{"error": {"code", "status", "message"}}``, exits non-zero, and changes nothing.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator, NoReturn, Sequence

from ..adapters.duckdb import DB_FILE
from ..api import Memory
from ..environment import resolve_embedder, resolve_home
from ..errors import IdentityIncomplete, MemcoreError
from ..identity import Identity
from . import verbs_documents, verbs_eval, verbs_extract, verbs_facts, verbs_home, verbs_tenant, verbs_write
from .registry import EXIT_ERROR, EXIT_USAGE, VERBS, Call, Output, UsageError, Verb
from .verbs_eval import DataNotFound

# The verb modules register their verbs when imported.
VERB_MODULES = (verbs_facts, verbs_write, verbs_documents, verbs_tenant, verbs_extract, verbs_home, verbs_eval)

__all__ = ["DataNotFound", "UsageError", "build_parser", "main"]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print usage and exit 2 on its own
        raise UsageError(f"{self.prog}: {message}")


def _json_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json", action="store_true", default=argparse.SUPPRESS, help="print exactly one JSON document on stdout"
    )


def _verb_parser(sub: argparse._SubParsersAction, verb: Verb) -> None:
    parser = sub.add_parser(verb.name, help=verb.help, description=verb.help)
    if verb.key:
        parser.add_argument("key")
    if verb.scope:
        parser.add_argument(
            "--scope", default="user", help="agent | user | tenant | global (default: user)" + verb.scope_help
        )
    _json_flag(parser)
    for argument in verb.arguments:
        parser.add_argument(*argument.flags, **argument.options)


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
    for verb in VERBS.values():
        _verb_parser(sub, verb)
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


def _run(args: argparse.Namespace) -> Output:
    """Run one verb; return (JSON document, human text, exit code)."""
    verb = VERBS[args.op]
    home = resolve_home(args.home)
    if not verb.opens_home:
        return verb.run(Call(args, home))
    with _no_trace_if_refused(home, verb.writes):
        identity = _identity(args) if verb.identity else None  # refused before the home is touched
        embedder = resolve_embedder(args.embedder)
        options = {
            k: v
            for k, v in (
                ("base_url", args.embedder_base_url),
                ("model", args.embedder_model),
                ("dim", args.embedder_dim),
            )
            if v
        }
        with Memory.open(
            home, create=verb.writes, embedder=None if embedder == "none" else embedder, **options
        ) as memory:
            tool = memory.for_run(identity, origin="memcore.cli") if identity else None
            return verb.run(Call(args, home, memory, tool))


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
