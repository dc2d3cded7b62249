"""A deterministic synthetic placement corpus: typed facts, written by runs with different grants.

Each item is one fact about a typed subject (a service, a database, a person, a preference...),
stated by a run of one of a tenant's users, with the graph fact it states. The corpus is built
so that every branch of the placement tree occurs, and the expected scope and reason of every
item is known by construction: ``load_placed`` writes the items with ``scope="auto"`` and
``check_placed`` compares where each landed (both halves: the row and its graph fact).

Until extraction lands, this corpus is what the ``placement`` group places.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass
from typing import Callable

from memory_core import Identity, Memory
from memory_core.graph.model import entity_id
from memory_core.identity import Scope

ONTOLOGY = """# Synthetic tenant ontology

## service
- `@memory_scope` tenant
- `owner`: the team that runs it
- `depends_on`: what it needs

## database
- `@memory_scope` tenant
- `engine`: what it runs on

## person
- `email`: how to reach them

## preference
- `@memory_scope` user
"""

SERVICES = ["checkout-api", "search-api", "billing-worker", "auth-gateway", "ledger-service", "notify-bus"]
DATABASES = ["payments-db", "orders-db", "audit-store", "session-cache"]
TEAMS = ["team payments", "team platform", "team growth", "team identity"]
PEOPLE = ["dana", "emeka", "farah", "goran"]
PREFERENCES = ["dark mode", "short answers", "metric units", "morning standups"]
USERS = ["ana", "bob", "chen"]


@dataclass(frozen=True, slots=True)
class PlacementItem:
    user: str
    grants: str  # full | no_sql_tenant | no_memory_tenant | isolated
    subject: str
    subject_type: str
    key: str
    value: str
    relation: tuple[str, str, str]
    expected_scope: str
    expected_reason: str


@dataclass(frozen=True, slots=True)
class PlacementCorpus:
    tenant: str
    ontology: str
    items: tuple[PlacementItem, ...]

    @property
    def fingerprint(self) -> str:
        body = json.dumps([asdict(i) for i in self.items], sort_keys=True)
        return hashlib.sha256((self.ontology + body).encode()).hexdigest()[:16]


def identity_for(tenant: str, item: PlacementItem) -> Identity:
    user_only = frozenset({Scope.USER, Scope.AGENT})
    scopes = {
        "full": {},
        "no_sql_tenant": {"sql_scopes": user_only},
        "no_memory_tenant": {"memory_scopes": user_only},
        "isolated": {"isolated": True},
    }[item.grants]
    return Identity(tenant=tenant, user=item.user, agent="placer", session="synthetic", **scopes)


def generate_placement(seed: int = 11, items: int = 120, tenant: str = "placement-demo") -> PlacementCorpus:
    rng = random.Random(seed)
    out: list[PlacementItem] = []
    # Two services are sometimes filed as people: a later fact filing them as a service, by a
    # run that can see the earlier typing, must stay with its user.
    retyped = set(rng.sample(SERVICES, 2))
    # The types the graph holds for a subject, per namespace ("tenant", or a user's name).
    typed: dict[tuple[str, str], set[str]] = {}
    for n in range(items):
        user = rng.choice(USERS)
        grants = rng.choices(["full", "no_sql_tenant", "no_memory_tenant", "isolated"], [6, 1, 1, 1])[0]
        kind = rng.choices(["service", "database", "person", "preference", "undeclared", "self"], [4, 2, 1, 1, 1, 1])[0]
        if kind == "service":
            subject = rng.choice(SERVICES)
            subject_type = "person" if subject in retyped and rng.random() < 0.4 else "service"
            relation = (subject, "owned by", rng.choice(TEAMS))
        elif kind == "database":
            subject, subject_type = rng.choice(DATABASES), "database"
            relation = (subject, "engine", rng.choice(["postgres", "duckdb", "redis"]))
        elif kind == "person":
            subject, subject_type = rng.choice(PEOPLE), "person"
            relation = (subject, "works in", rng.choice(TEAMS))
        elif kind == "preference":
            subject, subject_type = user, "preference"
            relation = ("user", "prefers", rng.choice(PREFERENCES))
        elif kind == "undeclared":
            subject, subject_type = f"vendor-{rng.randint(1, 5)}", "vendor"
            relation = (subject, "supplies", rng.choice(["laptops", "coffee", "badges"]))
        else:
            subject, subject_type = user, "service"  # a user filed under a service type: still their profile
            relation = ("user", "on call for", rng.choice(SERVICES))
        visible = typed.get(("user:" + user, subject), set())
        if grants != "no_memory_tenant":
            visible = visible | typed.get(("tenant", subject), set())
        scope, reason = _expected(subject, subject_type, grants, user, visible)
        if relation[0] == subject:  # the graph types the subject of the fact it states
            typed.setdefault(("tenant" if scope == "tenant" else "user:" + user, subject), set()).add(subject_type)
        value = f"{relation[0]} {relation[1]} {relation[2]}"
        out.append(
            PlacementItem(
                user, grants, subject, subject_type, f"{subject_type}:{subject}:{n:04d}", value, relation, scope, reason
            )
        )
    return PlacementCorpus(tenant, ONTOLOGY, tuple(out))


def _expected(subject: str, subject_type: str, grants: str, user: str, known_types: set[str]) -> tuple[str, str]:
    """The placement tree, evaluated from the corpus's own construction."""
    declared = {"service": "tenant", "database": "tenant", "person": None, "preference": "user"}
    if subject_type not in declared:
        return "user", "type_undeclared"
    if declared[subject_type] is None:
        return "user", "no_scope_declared"
    if declared[subject_type] == "user":
        return "user", "declared_user"
    if known_types - {subject_type}:
        return "user", "subject_typed_inconsistently"
    if subject == user:
        return "user", "subject_is_profile_owner"
    if grants == "isolated":
        return "user", "caller_isolated"
    if grants in ("no_sql_tenant", "no_memory_tenant"):
        return "user", "missing_tenant_grant"
    return "tenant", "placed_in_tenant"


@dataclass(frozen=True, slots=True)
class PlacementReport:
    written: int
    by_reason: dict[str, int]
    by_scope: dict[str, int]
    mismatches: tuple[dict, ...]
    halves_apart: tuple[str, ...]  # keys whose row and graph fact did not land in one scope


def load_placed(
    memory: Memory, corpus: PlacementCorpus, *, progress: Callable[[int, int], None] | None = None
) -> PlacementReport:
    """Set the ontology (as the tenant's admin) and write every item with ``scope="auto"``.
    A corpus already placed in this home is not written twice: its stored report is returned."""
    marker = f"placement:{corpus.tenant}:{corpus.fingerprint}"
    stored = memory.store.inspection.marker(marker)
    if stored is not None:
        body = json.loads(stored)
        return PlacementReport(
            body["written"], body["by_reason"], body["by_scope"], tuple(body["mismatches"]), tuple(body["halves_apart"])
        )
    admin = memory.for_run(Identity(tenant=corpus.tenant, user="admin", admin=True))
    found = admin.ontology_get()
    if found is None or found.markdown != corpus.ontology:
        admin.ontology_set(corpus.ontology)
    by_reason: dict[str, int] = {}
    by_scope: dict[str, int] = {}
    mismatches, apart = [], []
    for n, item in enumerate(corpus.items, start=1):
        tool = memory.for_run(identity_for(corpus.tenant, item), origin="corpora.placement")
        result = tool.set(
            item.key,
            item.value,
            scope="auto",
            subject=item.subject,
            subject_type=item.subject_type,
            relations=[list(item.relation)],
        )
        placed = result.details["placement"]
        by_reason[placed["reason"]] = by_reason.get(placed["reason"], 0) + 1
        by_scope[placed["scope"]] = by_scope.get(placed["scope"], 0) + 1
        if (placed["scope"], placed["reason"]) != (item.expected_scope, item.expected_reason):
            mismatches.append(
                {
                    "key": item.key,
                    "expected": [item.expected_scope, item.expected_reason],
                    "got": [placed["scope"], placed["reason"]],
                }
            )
        facts = tool.list_facts(item.relation[0], scope=placed["scope"])
        if tool.get(item.key, scope=placed["scope"]) is None or not any(
            any(r["key"] == item.key for r in f.rows) and f.object == entity_id(item.relation[2]) for f in facts
        ):
            apart.append(item.key)
        if progress and (n % 25 == 0 or n == len(corpus.items)):
            progress(n, len(corpus.items))
    report = PlacementReport(
        len(corpus.items),
        dict(sorted(by_reason.items())),
        dict(sorted(by_scope.items())),
        tuple(mismatches),
        tuple(apart),
    )
    memory.store.inspection.set_marker(marker, json.dumps(asdict(report)))
    return report
