"""How every table of the home takes part in an erasure: which rows a target covers, which
columns hold what a person wrote (where the census looks for the erased strings), or why the
table holds none. A table in no class fails ``tests/core/test_erasure_classes.py``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...erasure import ErasureTarget, TargetKind

# How a table's rows are matched to a target.
SCOPED = "scoped"  # tenant, scope, owner_id columns
TENANT = "tenant"  # tenant-wide settings and records: erased with the tenant only
CONSUMER = "consumer"  # rows of one consumer (a user or an agent) of the tenant
API_KEYS = "api_keys"  # keys issued to the user or the agent
AUDIT = "audit"  # kept, hash-only: the keys they name are replaced by their commitments
NONE = "none"  # holds no content (a reason says why)


@dataclass(frozen=True, slots=True)
class TableRule:
    how: str
    text: tuple[str, ...] = ()  # columns that may quote what a person wrote
    reason: str = ""


def _none(reason: str) -> TableRule:
    return TableRule(NONE, (), reason)


ERASURE_RULES: dict[str, TableRule] = {
    "memory_versions": TableRule(SCOPED, ("key", "value_json", "attrs")),
    "memory_heads": _none("a view over memory_versions"),
    "audit_log": TableRule(AUDIT, ("key",)),
    "audit_digests": TableRule(AUDIT, ("row_key",)),
    "audit_head": _none("the chain's newest seq, hash and signature"),
    "meta": _none("schema version, watermarks and markers"),
    "write_config": TableRule(TENANT, ("config_json",)),
    "ontologies": TableRule(TENANT, ("markdown",)),
    "graph_entities": TableRule(SCOPED, ("entity_id", "entity_type")),
    "graph_triples": TableRule(SCOPED, ("subject", "relation", "object")),
    "graph_links": TableRule(SCOPED, ("key",)),
    "projection_failures": TableRule(SCOPED, ("key", "error")),
    "extraction_queue": TableRule(SCOPED, ("payload", "result", "last_error")),
    "resolver_marks": TableRule(SCOPED, ("key", "reason")),
    "resolver_records": TableRule(SCOPED, ("peer_key", "reason")),
    "snapshots_restored": TableRule(SCOPED),
    "llm_spend": TableRule(SCOPED),
    "erasures": TableRule(TENANT),
    "erasure_requests": _none("the saga's own record: the target's ids, its steps and its counts"),
    "api_keys": TableRule(API_KEYS, ("label",)),
    "state_changes": TableRule(SCOPED, ("body",)),
    "lens_contracts": TableRule(TENANT, ("contract",)),
    "lens_preferences": TableRule(TENANT, ("preferences",)),
    "lens_assignments": TableRule(CONSUMER),
    "permission_groups": TableRule(TENANT, ("permissions",)),
    "frames": TableRule(SCOPED, ("goal", "tags", "next_steps", "suppressed", "summary")),
    "decision_traces": TableRule(SCOPED, ("rationale", "inputs", "outcome", "tags")),
    "interactions": TableRule(CONSUMER, ("query", "refs", "feedback", "detail")),
    "receipts": TableRule(CONSUMER, ("body",)),
    "webhooks": TableRule(TENANT, ("url",)),
    "webhook_outbox": TableRule(SCOPED, ("body",)),
    "consolidation_runs": TableRule(SCOPED),
    "consolidation_clusters": TableRule(SCOPED, ("summary_key", "detail")),
    "belief_sources": TableRule(SCOPED, ("key", "source_key")),
    "session_summaries": TableRule(SCOPED, ("session", "digest")),  # the digest quotes the turns
    "resolver_pauses": TableRule(SCOPED, ("reason",)),
    "entity_communities": TableRule(SCOPED, ("communities",)),
    "profile_schemas": TableRule(SCOPED, ("schema_json",)),  # descriptions and key patterns a person wrote
    "dream_proposals": TableRule(SCOPED, ("targets", "change", "rationale", "note")),
    "reflect_cursors": TableRule(TENANT),  # a phase's seq per tenant: no content
    "reflect_inputs": TableRule(SCOPED, ("source_key",)),
    "reflect_claims": TableRule(
        SCOPED, ("text", "key", "subject", "source_key", "relations", "connections", "plan", "reason", "fact_key")
    ),
    "usage_exposures": TableRule(SCOPED),  # fact ids and counts
    "usage_totals": TableRule(SCOPED),
    "usage_folded": TableRule(TENANT),  # interaction ids and times: no content
    "categories": TableRule(SCOPED, ("name", "description")),
    "category_links": TableRule(SCOPED, ("key", "category")),
    "memory_links": TableRule(SCOPED, ("key", "other_key", "relation")),
    "namespace_states": TableRule(SCOPED),  # delete / register events: who and when, no content
    # A candidate lives in the agent's scope (an agent's or the tenant's erasure deletes it); a
    # supporter in the user's, so a user's erasure deletes it here, and the erasure's rows step
    # then settles the candidates it left unsupported (services/learnings.settle_unsupported).
    "learnings_queue": TableRule(SCOPED, ("rule",)),
    "learnings_supporters": TableRule(SCOPED, ("quote",)),
    # a crystallized session: its id, who it runs as, what its extraction wrote or why it failed
    "observe_sessions": TableRule(SCOPED, ("session", "identity", "result", "last_error")),
    "webhook_deliveries": _none("event ids, counters and HTTP statuses; its events' outbox rows go with their scope"),
}


def _owners(target: ErasureTarget, scope: str) -> list[str]:
    return [o for s, o in target.pairs or () if s == scope]


def _consumers(target: ErasureTarget) -> list[str]:
    """How lenses, frames and interactions name the target's consumers (``user:ana``)."""
    return [f"{s}:{o}" for s, o in target.pairs or () if s in ("user", "agent")]


def where(rule: TableRule, target: ErasureTarget) -> tuple[str, list[Any]]:
    """The rows of a table (by its rule) that a target covers, as SQL and parameters."""
    if rule.how == NONE:
        return "FALSE", []
    whole = target.kind is TargetKind.TENANT
    if rule.how in (SCOPED, AUDIT):
        if whole:
            return "tenant = ?", [target.tenant]
        pairs = [f"{s}/{o}" for s, o in target.pairs or ()]
        return "tenant = ? AND list_contains(?, scope || '/' || owner_id)", [target.tenant, pairs]
    if rule.how == TENANT:
        return ("tenant = ?", [target.tenant]) if whole else ("FALSE", [])
    if rule.how == CONSUMER:
        if whole:
            return "tenant = ?", [target.tenant]
        return "tenant = ? AND list_contains(?, consumer)", [target.tenant, _consumers(target)]
    if rule.how == API_KEYS:
        if whole:
            return "tenant = ?", [target.tenant]
        users, agents = _owners(target, "user"), _owners(target, "agent")
        return "tenant = ? AND (list_contains(?, user_id) OR list_contains(?, agent))", [target.tenant, users, agents]
    raise ValueError(f"no erasure rule {rule.how!r}")


def row_key_parts(target: ErasureTarget) -> list[list[str]]:
    """What the ledger's row keys of the target's rows begin with: every scoped and tenant table
    keys its rows by ``json_array(tenant, ...)`` (a version row by its id, which is no content).
    The store renders them with its own ``json_array``, so an id's escaping matches."""
    if target.kind is TargetKind.TENANT:
        return [[target.tenant]]
    return [[target.tenant, s, o] for s, o in target.pairs or ()]
