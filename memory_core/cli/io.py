"""What the verbs read from the command line and files, as typed errors when it is malformed."""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from ..environment import llm_api_key, resolve_embedder, resolve_store
from ..errors import InvalidInput, NotUtf8, ValueTooDeep
from ..model import FactVersion, WriteResult
from ..temporal import iso
from .registry import arg

# The two time axes, as the reading verbs take them.
_URL = re.compile(r"https?://[\x21-\x7e]+")
LLM_ARGS = (
    arg(
        "--llm",
        help="an OpenAI-compatible endpoint (base URL, e.g. http://127.0.0.1:8000/v1) for ask; "
        "its key: $MEMCORE_LLM_KEY, else $OPENAI_API_KEY",
    ),
    arg("--llm-model", default="gpt-4o-mini", help="the model at --llm (default gpt-4o-mini)"),
    arg("--llm-price-in", type=float, default=0.0, help="USD per million prompt tokens, counted against the budget"),
    arg("--llm-price-out", type=float, default=0.0, help="USD per million completion tokens (default 0)"),
)
AS_OF = arg("--as-of", help="valid time to read at (default: now, or --known-at)")
KNOWN_AT = arg("--known-at", help="transaction time: what the store held at that instant")

SET_OPTION_ARGS = (
    arg("--subject", help="who the value is about or who said it"),
    arg("--context", help="words that help find the value without being it"),
    arg("--pin", action="store_true", help="pin the value (also: change a pinned one)"),
    arg("--proposed", action="store_true", help="state it as a proposal"),
    arg(
        "--if-match",
        dest="if_match_sha256",
        metavar="SHA",
        help="write only if the key's live value has this content_sha256",
    ),
    arg("--ttl", dest="ttl_seconds", type=float, metavar="N", help="expire after N seconds"),
    arg("--on-expire", choices=["tombstone", "demote", "anonymize"], help="what expiry does"),
    arg("--sensitivity", choices=["low", "normal", "high"], help="raise (never lower) the tier"),
    arg("--source-class", choices=["derived", "external", "imported"], help="downgrade the source class"),
    arg("--confidence", type=float, help="0 < c <= 1 (default 1)"),
    arg("--dry-run", action="store_true", help="answer the verdict, write nothing"),
    arg("--subject-type", help="the subject's entity type (placement with --scope auto; the graph)"),
    arg(
        "--relation",
        dest="relations",
        action="append",
        metavar="S|R|O",
        help="a graph fact the value states: 'subject|relation|object' or a JSON object "
        "{subject, relation, object, valid_at, invalid_at}; repeat for more (at most 8)",
    ),
)


def embedder_of(args: argparse.Namespace) -> tuple[str | None, dict[str, Any]]:
    """The embedder a home is opened with (``None``: keep no index) and the other options it is
    opened with: ``--embedder`` (else ``MEMCORE_EMBEDDER``), ``--embedder-base-url / -model /
    -dim / -path``, the authority (``--store``, else ``MEMCORE_STORE``) and ``--signing-keys``."""
    embedder = resolve_embedder(args.embedder)
    options = {
        k: v
        for k, v in (
            ("base_url", args.embedder_base_url),
            ("model", args.embedder_model),
            ("dim", args.embedder_dim),
            ("model_path", getattr(args, "embedder_path", None)),
            ("store", resolve_store(getattr(args, "store", None))),
            ("key_dir", getattr(args, "key_dir", None)),
        )
        if v
    }
    return (None if embedder == "none" else embedder), options


def read_file(file: str) -> str:
    """A file's text (``-``: standard input), as typed errors when it cannot be read as UTF-8."""
    try:
        if file == "-":
            return sys.stdin.read()
        path = Path(file)
        if not path.is_file():
            raise InvalidInput(f"no such file: {file!r}", field="file")
        return path.read_text(encoding="utf-8")
    except UnicodeError:  # bytes that are not UTF-8, or a file name that cannot be one
        raise NotUtf8(f"{file!r} is not UTF-8 text", field="file") from None
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"{file!r} could not be read ({type(exc).__name__})", field="file") from None


def loads(text: str, what: str, field: str) -> Any:
    """JSON text, as typed errors: malformed, or nested deeper than the stack allows."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"{what} is not JSON: {exc}", field=field) from None
    except RecursionError:
        raise ValueTooDeep(f"{what} nests too deep", field=field) from None


def entries(text: str, plain_lines: bool) -> list[Any]:
    """A JSON list, or JSON lines (``plain_lines``: a line that is not JSON is a string)."""
    stripped = text.strip()
    if stripped.startswith("["):
        return loads(stripped, "the file (a JSON list)", "file")
    items = []
    for number, line in enumerate(t for t in text.splitlines() if t.strip()):
        try:
            items.append(loads(line, f"line {number + 1}", "file"))
        except ValueTooDeep:
            raise
        except InvalidInput:
            if not plain_lines:
                raise InvalidInput(
                    f"line {number + 1} is not JSON (bulk-set takes a JSON list or JSON lines)", field="file"
                ) from None
            items.append(line.strip())
    return items


def json_option(text: str | None, name: str) -> Any:
    if not text:
        return None
    return loads(text, f"--{name}", name)


def json_file(file: str, what: str) -> Any:
    return loads(read_file(file), f"the {what}", "file")


def write_text(file: str, content: str) -> None:
    """Write an output file (``--out``), as a typed error when the path cannot take it."""
    try:
        Path(file).write_text(content, encoding="utf-8")
    except UnicodeError:
        raise NotUtf8(f"--out {file!r} is not a UTF-8 path", field="out") from None
    except (OSError, ValueError) as exc:
        raise InvalidInput(f"--out {file!r} could not be written ({type(exc).__name__})", field="out") from None


def settings(pairs: list[str]) -> dict[str, Any]:
    out = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise InvalidInput(f"settings are NAME=JSON, got {pair!r}", field="settings")
        try:
            out[name] = loads(raw, name, "settings")
        except ValueTooDeep:
            raise
        except InvalidInput:
            out[name] = raw
    return out


def set_options(args: argparse.Namespace) -> dict[str, Any]:
    names = (
        "subject",
        "context",
        "pin",
        "proposed",
        "if_match_sha256",
        "ttl_seconds",
        "on_expire",
        "sensitivity",
        "source_class",
        "confidence",
        "subject_type",
    )
    out = {n: getattr(args, n) for n in names if getattr(args, n) not in (None, False)}
    if getattr(args, "relations", None):
        out["relations"] = [_relation(text) for text in args.relations]
    return out


def _relation(text: str) -> Any:
    if text.lstrip().startswith("{"):
        return json_option(text, "relation")
    parts = [p.strip() for p in text.split("|")]
    if len(parts) != 3:
        raise InvalidInput(f"--relation is 'subject|relation|object' or a JSON object, got {text!r}", field="relation")
    return parts


def fact_line(v: FactVersion) -> str:
    until = f" until {iso(v.invalid_at)}" if v.invalid_at else ""
    return f"{v.key} = {v.value_json}  (valid from {iso(v.valid_at)}{until}; v{v.version}, {v.status.value})"


def write_line(result: WriteResult) -> str:
    version = result.version
    return f"{result.verdict}: {result.key}" + (f" (v{version.version}, {version.status.value})" if version else "")


def counts_line(doc: dict[str, Any]) -> str:
    return " ".join(f"{k}={v}" for k, v in doc.items())


def llm_of(args: argparse.Namespace) -> Any:
    """The language model ``--llm`` names (the OpenAI-compatible adapter), or None."""
    if not getattr(args, "llm", None):
        return None
    url, model = args.llm, args.llm_model
    if not _URL.fullmatch(url):
        raise InvalidInput("--llm must be an http(s) URL such as http://127.0.0.1:8000/v1", field="llm")
    if not model or not model.isprintable() or not model.isascii():
        raise InvalidInput("--llm-model must be a model name (printable ASCII)", field="llm_model")
    prices = (args.llm_price_in, args.llm_price_out)
    if not all(0.0 <= p < 1e6 for p in prices):  # NaN fails too
        raise InvalidInput("--llm-price-in and --llm-price-out must be USD per million tokens, >= 0", field="llm_price")
    from ..adapters.llm.openai_chat import OpenAIChat

    return OpenAIChat(
        base_url=url, model=model, api_key=llm_api_key(), price_in_per_mtok=prices[0], price_out_per_mtok=prices[1]
    )
