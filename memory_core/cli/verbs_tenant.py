"""The tenant's settings (admin): configure, configure-type, ontology-set, ontology-get; and
where a fact would be placed (place)."""

from __future__ import annotations

import json

from .io import read_file, settings
from .registry import Call, Output, arg, verb


@verb(
    "configure",
    "change the tenant's write settings (admin): NAME=JSON ...",
    arg("settings", nargs="*", help='e.g. policy="newest_wins" conflict_threshold=0.8'),
    scope=False,
    writes=True,
)
def configure(call: Call) -> Output:
    doc = call.tool.configure(**settings(call.args.settings))
    return doc, json.dumps(doc), 0


@verb(
    "configure-type",
    "change one memory type's settings (admin): TYPE NAME=JSON ...",
    arg("memory_type"),
    arg("settings", nargs="*", help="e.g. retention_days=30 embedded=false"),
    scope=False,
    writes=True,
)
def configure_type(call: Call) -> Output:
    doc = call.tool.configure_type(call.args.memory_type, **settings(call.args.settings))
    return doc, json.dumps(doc), 0


@verb(
    "ontology-set",
    "store a new version of the tenant's ontology (admin): a Markdown file",
    arg("file", help="the ontology (Markdown), or - for standard input"),
    scope=False,
    writes=True,
)
def ontology_set(call: Call) -> Output:
    doc = call.tool.ontology_set(read_file(call.args.file)).to_dict()
    types = ", ".join(f"{name} ({t['memory_scope'] or 'no scope'})" for name, t in doc["types"].items())
    return doc, f"ontology v{doc['version']}: {types}", 0


@verb("ontology-get", "the tenant's newest ontology", scope=False)
def ontology_get(call: Call) -> Output:
    ontology = call.tool.ontology_get()
    if ontology is None:
        return {"version": None}, "(no ontology)", 0
    doc = {"version": ontology.version, "sha256": ontology.sha256, "markdown": ontology.markdown}
    return doc, ontology.markdown, 0


@verb(
    "place",
    "where a fact about SUBJECT of TYPE belongs for this run, and why",
    arg("subject"),
    arg("subject_type", metavar="TYPE"),
    arg("--known-types", default="", help="comma-separated types the subject was given before"),
    arg("--profile-owner", help="the name of the user the memory is about"),
    scope=False,
)
def place(call: Call) -> Output:
    args = call.args
    known = [t for t in args.known_types.split(",") if t.strip()]
    placed = call.tool.placement(args.subject, args.subject_type, known_types=known, profile_owner=args.profile_owner)
    return placed.to_dict(), f"{placed.scope.value}: {placed.reason} ({placed.detail})", 0
