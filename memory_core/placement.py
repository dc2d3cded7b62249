"""Ontology-declared placement: which scope a fact about a subject belongs in.

A tenant's ontology is Markdown: a `## <type>` heading per entity type, a bullet
`` `@memory_scope` tenant `` declaring where facts about things of that type live, and other
bullets `` `field`: description ``. It is parsed with a Markdown parser (markdown-it), stored per
tenant with a version, and read by ``decide``, a pure function that moves a fact to the tenant
scope only when nothing is uncertain. Every doubt keeps it in the user's scope (the default):
declining costs what the system already costs, a wrong move cannot be taken back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable

from .errors import InvalidInput
from .identity import Identity, Scope
from .values import content_sha256

SCOPE_DIRECTIVE = "@memory_scope"
DECLARABLE_SCOPES = ("tenant", "user")


class InvalidOntology(InvalidInput):
    code = "INVALID_ONTOLOGY"


@dataclass(frozen=True, slots=True)
class EntityType:
    name: str
    memory_scope: str | None  # None: no declaration, facts stay with the user
    fields: tuple[tuple[str, str], ...] = ()  # (field, description)


@dataclass(frozen=True, slots=True)
class Ontology:
    types: dict[str, EntityType]
    markdown: str
    sha256: str
    version: int = 0

    def type(self, name: str) -> EntityType | None:
        return self.types.get(name.strip().lower())

    def to_dict(self) -> dict[str, Any]:
        """Its version and digest, and each type's scope and fields (the Markdown is left out)."""
        return {
            "version": self.version,
            "sha256": self.sha256,
            "types": {
                t.name: {"memory_scope": t.memory_scope, "fields": [f for f, _ in t.fields]}
                for t in self.types.values()
            },
        }


def parse_ontology(markdown: str) -> Ontology:
    """Parse an ontology; refuse (422) a duplicate type, a bullet outside a type, an unknown scope."""
    from markdown_it import MarkdownIt

    if not isinstance(markdown, str) or not markdown.strip():
        raise InvalidOntology("the ontology must be non-empty Markdown with a `## <type>` heading per type")
    tokens = MarkdownIt("commonmark").parse(markdown)
    types: dict[str, EntityType] = {}
    current: str | None = None
    scope: dict[str, str | None] = {}
    fields: dict[str, list[tuple[str, str]]] = {}
    for i, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[i + 1]
            if token.tag != "h2":
                current = None  # a title or a sub-heading: not a type
                continue
            name = inline.content.strip().lower()
            if not name or " " in name:
                raise InvalidOntology(f"type heading {inline.content!r} must be one word", line=token.map[0] + 1)
            if name in scope:
                raise InvalidOntology(f"type {name!r} is declared twice", line=token.map[0] + 1)
            current, scope[name], fields[name] = name, None, []
        elif token.type == "inline" and i > 0 and tokens[i - 1].type == "paragraph_open" and _in_list(tokens, i):
            children = token.children or []
            if not children or children[0].type != "code_inline":
                continue  # prose inside a list: not a field
            if current is None:
                raise InvalidOntology(
                    f"bullet {token.content!r} is not under a `## <type>` heading", line=(token.map or [0])[0] + 1
                )
            head, rest = children[0].content.strip(), "".join(c.content for c in children[1:]).strip()
            if head == SCOPE_DIRECTIVE:
                if rest not in DECLARABLE_SCOPES:
                    raise InvalidOntology(
                        f"type {current!r}: {SCOPE_DIRECTIVE} must be one of "
                        f"{', '.join(DECLARABLE_SCOPES)}, got {rest!r}"
                    )
                scope[current] = rest
            else:
                fields[current].append((head, rest.lstrip(":").strip()))
    for name in scope:
        types[name] = EntityType(name, scope[name], tuple(fields[name]))
    if not types:
        raise InvalidOntology("the ontology declares no type (a `## <type>` heading per entity type)")
    return Ontology(types, markdown, content_sha256(markdown))


def _in_list(tokens: list, index: int) -> bool:
    depth = 0
    for token in tokens[:index]:
        depth += {"bullet_list_open": 1, "bullet_list_close": -1}.get(token.type, 0)
    return depth > 0


@dataclass(frozen=True, slots=True)
class Placement:
    scope: Scope
    reason: str  # one of REASONS
    detail: str

    def to_dict(self) -> dict[str, str]:
        return {"scope": self.scope.value, "reason": self.reason, "detail": self.detail}


REASONS = (
    "no_ontology",
    "type_undeclared",
    "no_scope_declared",
    "declared_user",
    "subject_typed_inconsistently",
    "subject_is_profile_owner",
    "caller_isolated",
    "missing_tenant_grant",
    "placed_in_tenant",
)


def decide(
    ontology: Ontology | None,
    subject: str,
    subject_type: str,
    identity: Identity,
    *,
    known_types: Iterable[str] = (),
    profile_owner: str | None = None,
) -> Placement:
    """Where a fact about ``subject`` (of ``subject_type``) goes. ``known_types`` are the types the
    subject has been given before; ``profile_owner`` is the name of the user the memory is about."""

    def stay(reason: str, detail: str) -> Placement:
        return Placement(Scope.USER, reason, detail)

    if ontology is None:
        return stay("no_ontology", "the tenant has no ontology")
    declared = ontology.type(subject_type)
    if declared is None:
        return stay("type_undeclared", f"type {subject_type!r} is not declared in the tenant ontology")
    if declared.memory_scope is None:
        return stay("no_scope_declared", f"type {declared.name!r} declares no {SCOPE_DIRECTIVE}")
    if declared.memory_scope == "user":
        return stay("declared_user", f"type {declared.name!r} declares {SCOPE_DIRECTIVE} user")
    others = {t.strip().lower() for t in known_types} - {declared.name}
    if others:
        return stay("subject_typed_inconsistently", f"subject {subject!r} is also typed {', '.join(sorted(others))}")
    owners = {n.strip().lower() for n in (profile_owner, identity.user) if n}
    if subject.strip().lower() in owners:
        return stay("subject_is_profile_owner", "a fact about the user themself stays in their scope")
    if identity.isolated:
        return stay("caller_isolated", "this run is isolated: its facts never leave its user's scope")
    missing = [
        grant
        for grant, scopes in (("memory_scopes", identity.memory_scopes), ("sql_scopes", identity.sql_scopes))
        if not identity.admin and Scope.TENANT not in scopes
    ]
    if missing:
        return stay("missing_tenant_grant", f"the run lacks the tenant grant on {' and '.join(missing)}")
    return Placement(
        Scope.TENANT,
        "placed_in_tenant",
        f"type {declared.name!r} declares {SCOPE_DIRECTIVE} tenant; both halves go to the tenant scope",
    )
