"""``memcore``: the Memory tool from a shell.

Every verb is one registered function (``registry``) in the ``verbs_*`` modules. Every command
takes ``--json`` and then prints exactly one JSON document on stdout. An error prints
``{"error": {"code", "status", "message"}}``, exits non-zero, and changes nothing. A failure the
library did not foresee is the same document with code ``INTERNAL`` (status 500); its traceback
goes to stderr only with ``--debug`` (or ``MEMCORE_DEBUG=1``), never to stdout.

With ``--url`` (or ``MEMCORE_URL``) and an API key (``--key`` / ``MEMCORE_KEY``) the verbs run
through a memory service (``memcore serve``) instead of opening the home (``remote``).
"""

from __future__ import annotations

import argparse
import datetime
import decimal
import json
import math
import os
import shutil
import sys
import traceback
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, NoReturn, Sequence

from ..adapters.duckdb import DB_FILE
from ..api import Memory
from ..environment import resolve_home
from ..errors import IdentityIncomplete, InternalError, MemcoreError
from ..identity import Identity
from . import (
    verbs_ask,
    verbs_byid,
    verbs_categories,
    verbs_consolidate,
    verbs_documents,
    verbs_erasure,
    verbs_eval,
    verbs_extract,
    verbs_facts,
    verbs_home,
    verbs_learnings,
    verbs_lenses,
    verbs_lineage,
    verbs_observe,
    verbs_remember,
    verbs_scope,
    verbs_service,
    verbs_tenant,
    verbs_webhooks,
    verbs_write,
)
from .io import embedder_of
from .registry import ALREADY_ANSWERED, EXIT_ERROR, EXIT_USAGE, VERBS, Call, Output, UsageError, Verb
from .remote import run_remote, service_of
from .verbs_eval import DataNotFound

# The verb modules register their verbs when imported.
VERB_MODULES = (
    verbs_facts,
    verbs_ask,
    verbs_write,
    verbs_documents,
    verbs_tenant,
    verbs_extract,
    verbs_consolidate,
    verbs_home,
    verbs_erasure,
    verbs_webhooks,
    verbs_service,
    verbs_lenses,
    verbs_remember,
    verbs_byid,
    verbs_scope,
    verbs_categories,
    verbs_observe,
    verbs_lineage,
    verbs_learnings,
    verbs_eval,
)

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
        "--url",
        help="run through the memory service at URL instead of opening the home (default: $MEMCORE_URL, "
        "unless --home is given); the API key then says who calls: no --tenant/--user/--agent/--admin",
    )
    p.add_argument("--key", dest="api_key", help="the service's API key (default: $MEMCORE_KEY)")
    p.add_argument(
        "--embedder",
        help="static | minilm | hashing | openai | none (default: $MEMCORE_EMBEDDER, else static); none keeps no index",
    )
    p.add_argument("--embedder-base-url", help="openai embedder: base URL of the endpoint")
    p.add_argument("--embedder-model", help="openai embedder: model name")
    p.add_argument("--embedder-dim", type=int, help="openai embedder: vector dimension")
    p.add_argument(
        "--embedder-path", metavar="DIR", help="minilm embedder: a tuned model folder (docs/retrieval.md, Embedders)"
    )
    p.add_argument(
        "--store",
        help="a PostgreSQL authority (postgresql://...?schema=NAME) instead of the home's own file; the home "
        "then keeps this process's index (default: $MEMCORE_STORE)",
    )
    p.add_argument(
        "--signing-keys",
        dest="key_dir",
        metavar="DIR",
        help="the folder of the home's signing key (default: <home>/keys); replicas of one store share one",
    )
    p.add_argument("--debug", action="store_true", help="print the traceback of an internal error on stderr")
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
    except Exception:  # a refusal, or a failure: either way the new home goes
        if writes and not db_existed:
            if not home_existed:
                shutil.rmtree(home, ignore_errors=True)
            else:
                for leftover in (home / DB_FILE, home / f"{DB_FILE}.wal"):
                    leftover.unlink(missing_ok=True)
        raise


def _run(args: argparse.Namespace, emit: Callable[[Any], None]) -> Output:
    """Run one verb; return (JSON document, human text, exit code)."""
    verb = VERBS[args.op]
    if verb.opens_home:
        url, key = service_of(args)
        if url:
            return run_remote(verb, args, url, key, emit)
    home = resolve_home(args.home)
    if not verb.opens_home:
        return verb.run(Call(args, home, emit=emit))
    writes = verb.creates(args)
    with _no_trace_if_refused(home, writes):
        identity = _identity(args) if verb.identity else None  # refused before the home is touched
        embedder, options = embedder_of(args)
        with Memory.open(home, create=writes, embedder=embedder, **options) as memory:
            tool = memory.for_run(identity, origin="memcore.cli") if identity else None
            return verb.run(Call(args, home, memory, tool, emit=emit))


def _printable(text: str) -> str:
    """Text any UTF-8 stream can take: a lone surrogate (echoed from the input) is escaped."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _plain(value: object) -> object:
    """What JSON has no spelling for, as it is usually written: SQL memory answers dates, decimals,
    UUIDs, intervals and blobs."""
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=repr)
    raise TypeError(f"{type(value).__name__} has no JSON spelling")


def _finite(value: object) -> object:
    """NaN and the infinities as null: JSON has no spelling for them either."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def _dump(doc: object) -> str:
    try:
        try:
            text = json.dumps(doc, ensure_ascii=False, allow_nan=False, default=_plain)
        except ValueError:  # a NaN or an infinity (a SQL answer's): said as null
            text = json.dumps(_finite(doc), ensure_ascii=False, allow_nan=False, default=_plain)
    except (TypeError, ValueError, RecursionError):  # a verb answered something JSON cannot spell
        raise InternalError("the answer could not be written as JSON") from None
    return _printable(text)


def _refused(exc: MemcoreError, want_json: bool, out: Callable[[str], None]) -> int:
    if want_json:
        try:
            body = _dump({"error": exc.to_dict()})
        except InternalError:  # details JSON cannot spell: the code and the message still can
            body = _dump({"error": {"code": exc.code, "status": exc.status, "message": str(exc.message)}})
        out(body)
    else:
        print(_printable(f"memcore: error [{exc.code}]: {exc.message}"), file=sys.stderr)
    return EXIT_USAGE if isinstance(exc, UsageError) else EXIT_ERROR


def main(argv: Sequence[str] | None = None, out: Callable[[str], None] = print) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    want_json = "--json" in argv
    debug = "--debug" in argv or os.environ.get("MEMCORE_DEBUG", "") not in ("", "0")

    def emit(doc: Any) -> None:  # a document printed while the verb runs (serve's announcement)
        out(_dump(doc))
        sys.stdout.flush()

    try:
        args = build_parser().parse_args(argv)
        doc, text, code = _run(args, emit)
        if doc is ALREADY_ANSWERED:
            return code
        answer = _dump(doc) if want_json else _printable(text)
    except MemcoreError as exc:
        return _refused(exc, want_json, out)
    except Exception as exc:  # noqa: BLE001 - the face answers every failure, never with a traceback on stdout
        if debug:
            traceback.print_exc(file=sys.stderr)
        # The exception's text may quote stored data: only its type is named.
        message = f"internal error ({type(exc).__name__}); run with --debug or MEMCORE_DEBUG=1 for the traceback"
        return _refused(InternalError(message), want_json, out)
    out(answer)
    return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
