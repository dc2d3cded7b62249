"""The write, lifecycle and SQL verbs of ``memcore``: set options, bulk-set, import, lock / pin /
promote / demote / reject, delete-version, redact, snapshot, restore-snapshot, rollback,
sweep-expired, the tenant's write settings, and sql-exec / sql-query."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, Callable

from ..api import Memory, MemoryTool
from ..errors import InvalidInput
from ..model import WriteResult

FLAG_VERBS = {
    "lock": "refuse every change of the key's value until unlocked (423)",
    "unlock": "allow changes again",
    "pin": "refuse a changed value (409) unless the write pins too; refuse close peers",
    "unpin": "remove the pin",
    "promote": "accept a proposal as an established fact",
    "demote": "make an established fact a proposal again (half its confidence, no expiry)",
    "reject": "mark the live value wrong: hidden, kept in history, undone by restore",
}
# Verbs that may create the home; a refused one leaves no trace of it.
WRITE_VERBS = {
    "set",
    "delete",
    "restore",
    "delete-version",
    "redact",
    "bulk-set",
    "import",
    "restore-snapshot",
    "rollback",
    "sweep-expired",
    "configure",
    "configure-type",
    "sql-exec",
    "ontology-set",
    "doc-put",
    "doc-delete",
    *FLAG_VERBS,
}
OTHER_VERBS = {"snapshot", "sql-query", "ontology-get", "place", "doc-get", "doc-list", "list-facts", "graph-recall"}
NO_IDENTITY = {"sweep-expired"}


def add_set_options(s: argparse.ArgumentParser) -> None:
    s.add_argument("--subject", help="who the value is about or who said it")
    s.add_argument("--context", help="words that help find the value without being it")
    s.add_argument("--pin", action="store_true", help="pin the value (also: change a pinned one)")
    s.add_argument("--proposed", action="store_true", help="state it as a proposal")
    s.add_argument(
        "--if-match",
        dest="if_match_sha256",
        metavar="SHA",
        help="write only if the key's live value has this content_sha256",
    )
    s.add_argument("--ttl", dest="ttl_seconds", type=float, metavar="N", help="expire after N seconds")
    s.add_argument("--on-expire", choices=["tombstone", "demote", "anonymize"], help="what expiry does")
    s.add_argument("--sensitivity", choices=["low", "normal", "high"], help="raise (never lower) the tier")
    s.add_argument("--source-class", choices=["derived", "external", "imported"], help="downgrade the source class")
    s.add_argument("--confidence", type=float, help="0 < c <= 1 (default 1)")
    s.add_argument("--dry-run", action="store_true", help="answer the verdict, write nothing")
    s.add_argument("--subject-type", help="the subject's entity type (placement with --scope auto; the graph)")
    s.add_argument(
        "--relation",
        dest="relations",
        action="append",
        metavar="S|R|O",
        help="a graph fact the value states: 'subject|relation|object' or a JSON object "
        "{subject, relation, object, valid_from, valid_to}; repeat for more (at most 8)",
    )


def add_verbs(op: Callable[..., argparse.ArgumentParser]) -> None:
    for name, text in FLAG_VERBS.items():
        op(name, text)
    dv = op("delete-version", "delete the key only while VERSION (as read) is still its head")
    dv.add_argument("version", type=int)
    rd = op("redact", "scrub one historical version's value (and its copies) in place; not the live head")
    rd.add_argument("version_id")
    for name, text in (
        ("bulk-set", "write a JSON list (or JSON lines) of {key, value, ...} in one transaction"),
        ("import", "import texts (JSON list of strings or {text, valid_at, ...}; or plain lines)"),
    ):
        b = op(name, text, key=False)
        b.add_argument("file", help="a file, or - for standard input")
        b.add_argument("--dry-run", action="store_true", help="run every check, write nothing")
    sn = op("snapshot", "print the scope's live facts as a portable payload", key=False)
    sn.add_argument("--out", help="write the payload to this file instead")
    rs = op("restore-snapshot", "write a snapshot payload into the scope (once per snapshot_id)", key=False)
    rs.add_argument("file", help="a payload file, or - for standard input")
    rb = op("rollback", "put every key of the scope back to an instant (dry run unless --apply)", key=False)
    rb.add_argument("--to", required=True, help="the instant (ISO-8601 with zone)")
    rb.add_argument("--apply", action="store_true", help="write the rollback (default: show the plan)")
    op("sweep-expired", "apply on_expire to every fact past its expires_at (all tenants)", key=False)
    cf = op("configure", "change the tenant's write settings (admin): NAME=JSON ...", key=False)
    cf.add_argument("settings", nargs="*", help='e.g. policy="newest_wins" conflict_threshold=0.8')
    for name, text in (
        ("sql-exec", "run one statement on the scope's SQL memory (tables, inserts, queries)"),
        ("sql-query", "run one read-only statement (SELECT, EXPLAIN) on the scope's SQL memory"),
    ):
        q = op(name, text, key=False)
        q.add_argument("statement")
        q.add_argument("--params", help="a JSON list (for ?) or object (for $name) of parameters")
    dp = op("doc-put", "store a Markdown document (FILE, or - for stdin) as searchable chunks under KEY")
    dp.add_argument("file")
    dp.add_argument("--metadata", help="a JSON object; subject, entity_type and fact_class make entity chunks")
    dp.add_argument("--title", help="default: the first heading")
    dg = op("doc-get", "a document: title, metadata, body")
    dg.add_argument("--as-of", help="valid time to read at")
    dg.add_argument("--known-at", help="transaction time: what the store held then")
    op("doc-list", "every document of the scope", key=False)
    op("doc-delete", "tombstone a document and its chunks")
    on = op("ontology-set", "store a new version of the tenant's ontology (admin): a Markdown file", key=False)
    on.add_argument("file", help="the ontology (Markdown), or - for standard input")
    op("ontology-get", "the tenant's newest ontology", key=False)
    lf = op("list-facts", "the graph facts about SUBJECT current now (or at --as-of)", key=False)
    lf.add_argument("subject")
    lf.add_argument("--relation", help="only this relation")
    lf.add_argument("--as-of", help="valid time to read at (default now)")
    gr = op(
        "graph-recall", "the graph around ENTITY: facts within --hops, entities reached, document chunks", key=False
    )
    gr.add_argument("entity")
    gr.add_argument("--hops", type=int, default=1, help="1 to 3 (default 1)")
    gr.add_argument("--as-of", help="valid time to read at (default now)")
    pl = op("place", "where a fact about SUBJECT of TYPE belongs for this run, and why", key=False)
    pl.add_argument("subject")
    pl.add_argument("subject_type", metavar="TYPE")
    pl.add_argument("--known-types", default="", help="comma-separated types the subject was given before")
    pl.add_argument("--profile-owner", help="the name of the user the memory is about")
    ct = op("configure-type", "change one memory type's settings (admin): TYPE NAME=JSON ...", key=False)
    ct.add_argument("memory_type")
    ct.add_argument("settings", nargs="*", help="e.g. retention_days=30 embedded=false")


def _read(file: str) -> str:
    if file == "-":
        return sys.stdin.read()
    path = Path(file)
    if not path.is_file():
        raise InvalidInput(f"no such file: {file}", field="file")
    return path.read_text(encoding="utf-8")


def _entries(text: str, plain_lines: bool) -> list[Any]:
    stripped = text.strip()
    if stripped.startswith("["):
        try:
            return json.loads(stripped)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"the file is not a JSON list: {exc}", field="file") from None
    items = []
    for number, line in enumerate(t for t in text.splitlines() if t.strip()):
        try:
            items.append(json.loads(line))
        except json.JSONDecodeError:
            if not plain_lines:
                raise InvalidInput(
                    f"line {number + 1} is not JSON (bulk-set takes a JSON list or JSON lines)", field="file"
                ) from None
            items.append(line.strip())
    return items


def _graph_line(fact: Any) -> str:
    until = fact.ended_at or fact.valid_to
    return (
        f"{fact.subject} {fact.relation} {fact.object}  from {fact.start.isoformat()}"
        + (f" until {until.isoformat()}" if until else "")
        + f"  ({', '.join(r['key'] for r in fact.rows)})"
    )


def _json_option(text: str | None, name: str) -> Any:
    if not text:
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(f"--{name} is not JSON: {exc}", field=name) from None


def _settings(pairs: list[str]) -> dict[str, Any]:
    out = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep or not name:
            raise InvalidInput(f"settings are NAME=JSON, got {pair!r}", field="settings")
        try:
            out[name] = json.loads(raw)
        except json.JSONDecodeError:
            out[name] = raw
    return out


def _write_line(result: WriteResult) -> str:
    version = result.version
    return f"{result.verdict}: {result.key}" + (f" (v{version.version}, {version.status.value})" if version else "")


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
        return _json_option(text, "relation")
    parts = [p.strip() for p in text.split("|")]
    if len(parts) != 3:
        raise InvalidInput(f"--relation is 'subject|relation|object' or a JSON object, got {text!r}", field="relation")
    return parts


def run_verb(memory: Memory, tool: MemoryTool | None, args: argparse.Namespace) -> tuple[Any, str, int]:
    verb = args.op
    if verb in FLAG_VERBS:
        result = getattr(tool, verb)(args.key, scope=args.scope)
        return result.to_dict(), _write_line(result), 0
    if verb == "delete-version":
        result = tool.delete_version(args.key, args.version, scope=args.scope)
        return result.to_dict(), _write_line(result), 0
    if verb == "redact":
        result = tool.redact(args.key, args.version_id, scope=args.scope)
        return result.to_dict(), f"redacted {result.details['versions_redacted']} version(s) of {args.key}", 0
    if verb in ("bulk-set", "import"):
        items = _entries(_read(args.file), plain_lines=verb == "import")
        run = tool.bulk_set if verb == "bulk-set" else tool.import_items
        bulk = run(items, scope=args.scope, dry_run=args.dry_run)
        doc = bulk.to_dict()
        return doc, " ".join(f"{k}={v if not isinstance(v, list) else len(v)}" for k, v in doc.items()), 0
    if verb == "snapshot":
        payload = tool.snapshot(scope=args.scope)
        if args.out:
            Path(args.out).write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
            doc = {"snapshot_id": payload["snapshot_id"], "rows": len(payload["rows"]), "out": args.out}
            return doc, f"snapshot {payload['snapshot_id']}: {len(payload['rows'])} facts -> {args.out}", 0
        return payload, json.dumps(payload, ensure_ascii=False, indent=1), 0
    if verb == "restore-snapshot":
        try:
            payload = json.loads(_read(args.file))
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"the snapshot file is not JSON: {exc}", field="file") from None
        result = tool.restore_snapshot(payload, scope=args.scope)
        return result.to_dict(), f"{result.verdict}: {len(result.rows)} version rows", 0
    if verb == "rollback":
        plan = tool.rollback(args.to, scope=args.scope, apply=args.apply)
        lines = [f"{s['action']:<15} {s['key']}" for s in plan["steps"]]
        head = "applied" if plan["applied"] else "dry run (add --apply to write it)"
        return (
            plan,
            "\n".join([f"rollback to {plan['to']}: {head}", *lines, f"{plan['unchanged']} key(s) unchanged"]),
            0,
        )
    if verb in ("sql-exec", "sql-query"):
        params = _json_option(args.params, "params")
        result = getattr(tool, verb.replace("-", "_"))(args.statement, params, scope=args.scope)
        lines = (
            [" | ".join(result.columns)] + [" | ".join(map(str, r)) for r in result.rows]
            if result.columns
            else [f"{result.statement_type}: done"]
        )
        if result.truncated:
            lines.append(f"(cut to the first {len(result.rows)} rows)")
        return result.to_dict(), "\n".join(lines), 0
    if verb == "doc-put":
        result = tool.doc_put(
            args.key,
            _read(args.file),
            metadata=_json_option(args.metadata, "metadata"),
            title=args.title,
            scope=args.scope,
        )
        return result.to_dict(), f"{result.verdict}: {args.key} ({result.details['chunks']} chunks)", 0
    if verb == "doc-get":
        doc = tool.doc_get(args.key, scope=args.scope, as_of=args.as_of, known_at=args.known_at)
        return (
            {"key": args.key, "found": doc is not None, "document": doc},
            doc["body"] if doc else f"{args.key}: no document",
            0,
        )
    if verb == "doc-list":
        docs = tool.doc_list(scope=args.scope)
        return (
            {"count": len(docs), "documents": docs},
            "\n".join(f"{d['key']}  {d['title']}  ({d['chunks']} chunks)" for d in docs) or "(no documents)",
            0,
        )
    if verb == "doc-delete":
        result = tool.doc_delete(args.key, scope=args.scope)
        return result.to_dict(), f"deleted: {args.key} ({result.details['chunks_deleted']} chunks)", 0
    if verb == "ontology-set":
        doc = tool.ontology_set(_read(args.file))
        return (
            doc,
            f"ontology v{doc['version']}: "
            + ", ".join(f"{name} ({t['memory_scope'] or 'no scope'})" for name, t in doc["types"].items()),
            0,
        )
    if verb == "ontology-get":
        ontology = tool.ontology_get()
        doc = (
            {"version": ontology.version, "sha256": ontology.sha256, "markdown": ontology.markdown}
            if ontology
            else {"version": None}
        )
        return doc, ontology.markdown if ontology else "(no ontology)", 0
    if verb == "list-facts":
        facts = tool.list_facts(args.subject, scope=args.scope, as_of=args.as_of, relation=args.relation)
        doc = {"subject": args.subject, "count": len(facts), "facts": [f.to_dict() for f in facts]}
        return doc, "\n".join(_graph_line(f) for f in facts) or "(no current facts)", 0
    if verb == "graph-recall":
        found = tool.graph_recall(args.entity, scope=args.scope, hops=args.hops, as_of=args.as_of)
        lines = [
            f"{name} (hop {e['hop']}{', ' + '/'.join(e['types']) if e['types'] else ''})"
            for name, e in found.entities.items()
        ]
        lines += [_graph_line(f) for f in found.facts]
        lines += [f"document {d['key']} [{d['fact_class']}]: {d['text'][:80]!r}" for d in found.documents]
        return found.to_dict(), "\n".join(lines), 0
    if verb == "place":
        known = [t for t in args.known_types.split(",") if t.strip()]
        placed = tool.placement(args.subject, args.subject_type, known_types=known, profile_owner=args.profile_owner)
        return placed.to_dict(), f"{placed.scope.value}: {placed.reason} ({placed.detail})", 0
    if verb == "sweep-expired":
        counts = memory.sweep_expired()
        return counts, " ".join(f"{k}={v}" for k, v in counts.items()), 0
    if verb == "configure":
        doc = tool.configure(**_settings(args.settings))
        return doc, json.dumps(doc), 0
    doc = tool.configure_type(args.memory_type, **_settings(args.settings))
    return doc, json.dumps(doc), 0
