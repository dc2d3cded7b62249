"""The document and graph verbs: doc-put, doc-get, doc-list, doc-delete, list-facts, graph-recall."""

from __future__ import annotations

from typing import Any

from .io import AS_OF, KNOWN_AT, json_option, read_file
from .registry import Call, Output, arg, verb


@verb(
    "doc-put",
    "store a Markdown document (FILE, or - for stdin) as searchable chunks under KEY",
    arg("file"),
    arg("--metadata", help="a JSON object; subject, entity_type and fact_class make entity chunks"),
    arg("--title", help="default: the first heading"),
    key=True,
    writes=True,
)
def doc_put(call: Call) -> Output:
    args = call.args
    result = call.tool.doc_put(
        args.key,
        read_file(args.file),
        metadata=json_option(args.metadata, "metadata"),
        title=args.title,
        scope=args.scope,
    )
    return result.to_dict(), f"{result.verdict}: {args.key} ({result.details['chunks']} chunks)", 0


@verb(
    "doc-get",
    "a document: title, metadata, body",
    AS_OF,
    KNOWN_AT,
    key=True,
)
def doc_get(call: Call) -> Output:
    args = call.args
    doc = call.tool.doc_get(args.key, scope=args.scope, as_of=args.as_of, known_at=args.known_at)
    found = {"key": args.key, "found": doc is not None, "document": doc.to_dict() if doc else None}
    return found, doc.body if doc else f"{args.key}: no document", 0


@verb("doc-list", "every document of the scope")
def doc_list(call: Call) -> Output:
    docs = call.tool.doc_list(scope=call.args.scope)
    text = "\n".join(f"{d.key}  {d.title}  ({d.chunks} chunks)" for d in docs) or "(no documents)"
    return {"count": len(docs), "documents": [d.to_dict() for d in docs]}, text, 0


@verb("doc-delete", "tombstone a document and its chunks", key=True, writes=True)
def doc_delete(call: Call) -> Output:
    result = call.tool.doc_delete(call.args.key, scope=call.args.scope)
    return result.to_dict(), f"deleted: {call.args.key} ({result.details['chunks_deleted']} chunks)", 0


def _graph_line(fact: Any) -> str:
    until = fact.ended_at or fact.invalid_at
    return (
        f"{fact.subject} {fact.relation} {fact.object}  from {fact.valid_at.isoformat()}"
        + (f" until {until.isoformat()}" if until else "")
        + f"  ({', '.join(r['key'] for r in fact.rows)})"
    )


@verb(
    "list-facts",
    "the graph facts about SUBJECT current now (or at --as-of)",
    arg("subject"),
    arg("--relation", help="only this relation"),
    arg("--as-of", help="valid time to read at (default now)"),
)
def list_facts(call: Call) -> Output:
    args = call.args
    facts = call.tool.list_facts(args.subject, scope=args.scope, as_of=args.as_of, relation=args.relation)
    doc = {"subject": args.subject, "count": len(facts), "facts": [f.to_dict() for f in facts]}
    return doc, "\n".join(_graph_line(f) for f in facts) or "(no current facts)", 0


@verb(
    "graph-recall",
    "the graph around ENTITY: facts within --hops, entities reached, document chunks",
    arg("entity"),
    arg("--hops", type=int, default=1, help="1 to 3 (default 1)"),
    arg("--as-of", help="valid time to read at (default now)"),
)
def graph_recall(call: Call) -> Output:
    args = call.args
    found = call.tool.graph_recall(args.entity, scope=args.scope, hops=args.hops, as_of=args.as_of)
    lines = [
        f"{name} (hop {e['hop']}{', ' + '/'.join(e['types']) if e['types'] else ''})"
        for name, e in found.entities.items()
    ]
    lines += [_graph_line(f) for f in found.facts]
    lines += [f"document {d['key']} [{d['fact_class']}]: {d['text'][:80]!r}" for d in found.documents]
    return found.to_dict(), "\n".join(lines), 0
