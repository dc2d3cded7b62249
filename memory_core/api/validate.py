"""The validation boundary of the Memory tool and of ``Memory``: every argument of every public op
is checked here, by name, before the op runs, and a refusal is a typed ``InvalidInput``.

``guard_ops(rules)`` wraps each public method of a class (the mechanism is ``boundary.py``). A
call first binds its arguments (an unknown keyword is ``UNKNOWN_OPTION`` naming it and the op's
options, a missing or extra argument is ``INVALID_INPUT``: never Python's ``TypeError``), then
checks each argument: every string in it is UTF-8 text and it nests at most ``inputs.MAX_DEPTH``
deep (``check_tree``), then the rule its name has in ``rules``. The rules are the pure checks of
``memory_core.inputs`` and the validators the ops use themselves (``validate_key``,
``parse_instant``, ...), so the HTTP service can apply the same table to a request body. A few
arguments are whole documents that the op's own request builder checks first, before anything
is read (``set``'s options: ``SetOptions``; a transcript, a snapshot, settings: ``_later``).
What an argument means (a key that exists, a statement the sandbox allows) stays the op's to
decide.
"""

from __future__ import annotations

from typing import Callable, Mapping

from ..identity import Identity
from ..model import FactVersion
from ..resolver.actions import ResolverSettings
from ..retrieval.answer import MAX_ASK_K
from ..retrieval.calibration import Calibration
from ..webhooks import DeliveryPolicy
from ..write.options import OPTION_NAMES
from .boundary import Rule, guard_class, uncovered
from .rule_kinds import (
    MAX_BODY_CHARS,
    MAX_STATEMENT_CHARS,
    _batch,
    _callable,
    _doc_key,
    _embedder,
    _embedder_options,
    _flag,
    _has,
    _home,
    _instance,
    _instant,
    _integer,
    _key,
    _later,
    _memory_type,
    _named,
    _names,
    _object,
    _optional_key,
    _scope,
    _seconds,
    _set_option,
    _sql_params,
    _text,
    _unit,
)
from .validate_surface import SURFACE_OP_RULES, SURFACE_RULES

# The Memory tool's arguments, by name. A name shared by two ops means the same thing in both.
TOOL_RULES: dict[str, Rule] = {
    **{name: _set_option for name in OPTION_NAMES},
    "key": _key,
    "peer_key": _key,
    "doc_key": _doc_key,
    "value": _later,  # canonical JSON (values.canonical_json): serializable, bounded, UTF-8
    "scope": _scope,
    "dry_run": _flag,
    "apply": _flag,
    "memory_type": _memory_type,
    "as_of": _instant,
    "known_at": _instant,
    "observed_from": _instant,
    "observed_to": _instant,
    "to": _instant,
    "session_date": _instant,
    "entries": _batch,
    "items": _batch,
    "messages": _later,  # extraction.model.parse_messages
    "payload": _later,  # lifecycle.history.check_payload
    "settings": _later,  # write.tenant_config.parse_tenant_config / parse_type_config
    "metadata": _later,  # documents.validate_metadata
    "query": _text(),
    "question": _text(),
    "recipe": _text(),
    "k": _integer(1, 1000),
    "token_budget": _integer(1, 10_000_000),
    "hops": _integer(1, 3),
    "version": _integer(1, 2**63 - 1),
    "max_attempts": _integer(1, 50),
    "sources": _names,
    "participants": _names,
    "cursor": _text(max_chars=200),
    "trace_id": _text(max_chars=200),
    "known_types": _names,
    "queue_ids": _names,
    "steps": _names,
    "statement": _text(max_chars=MAX_STATEMENT_CHARS),
    "params": _sql_params,
    "version_id": _text(),
    "decision": _text(),
    "body": _text(blank=True, max_chars=MAX_BODY_CHARS),
    "title": _text(blank=True, max_chars=1000),
    "markdown": _text(blank=True),
    "entity": _text(),
    "relation": _text(blank=True),
    "session": _text(blank=True),
    "profile_owner": _text(blank=True),
    "extractor": _named,
    "merger": _named,
    "min_cosine": _unit,
    "max_cluster": _integer(2, 1000),
    "run_id": _text(max_chars=200),
    "proposal_id": _text(max_chars=64),  # Dreams (api/dreams.py)
    "window_days": _integer(1, 365),
    "stale_days": _integer(1, 36_500),
    "note": _text(blank=True, max_chars=2000),
    # remember (substrate.*: each op's own parser checks what the value means)
    "lens_id": _text(max_chars=64),
    "frame_id": _text(max_chars=64),
    "decision_id": _text(max_chars=64),
    "interaction_id": _text(max_chars=64),
    "lenses": _names,
    "scopes": _names,
    "types": _names,
    "tags": _names,
    "inputs": _names,
    "suppress": _names,
    "unsuppress": _names,
    "actor_chain": _names,
    "entity_types": _names,
    "relationships": _names,
    "watches": _names,
    "capabilities": _names,
    "groups": _names,
    "cross_lens": _names,
    "permissions": _names,
    "claim": _text(max_chars=20_000),
    "source": _text(max_chars=2000),
    "author": _text(max_chars=200),
    "entity_type": _text(max_chars=200),
    "consumer": _text(max_chars=300),
    "group": _text(max_chars=64),
    "intent": _text(max_chars=40),
    "goal": _text(max_chars=4000),
    "rationale": _text(max_chars=8000),
    "outcome": _text(max_chars=4000),
    "summary": _text(max_chars=8000),
    "status": _text(max_chars=20),
    "max_sensitivity": _text(max_chars=20),
    "ref": _text(max_chars=300),
    "verdict": _text(max_chars=20),
    "timestamp": _instant,
    "expires_at": _instant,
    "at": _instant,
    "since": _integer(0, 2**62),
    "limit": _integer(1, 1000),
    "passes": _integer(1, 5),
    "include_index": _flag,
    "next_steps": _later,  # substrate.frames.parse_steps
    "preferences": _later,  # substrate.lenses.parse_preferences
    "roster": _later,  # substrate.roster.parse_roster
    "receipt": _later,  # substrate.receipts.parse_receipt
    "properties": _later,  # profiles.parse_schema: a structured profile's schema
    **SURFACE_RULES,
}
# Names that are set options in ``set`` and mean something else in another op.
OP_RULES: dict[tuple[str, str], Rule] = {
    ("list_facts", "subject"): _text(),
    ("placement", "subject"): _text(),
    ("placement", "subject_type"): _text(),
    ("place_fact", "subject"): _text(),
    ("place_fact", "subject_type"): _text(),
    ("known_types", "subject"): _text(),
    ("set_from_messages", "compaction_generation"): _integer(0, 2**31),
    ("ask", "k"): _integer(1, MAX_ASK_K),
    ("capture", "key"): _optional_key,
    ("capture", "confidence"): _unit,
    ("lens_define", "title"): _text(max_chars=200),
    ("get_context", "token_budget"): _integer(1, 1_000_000),
    **SURFACE_OP_RULES,
}
# A batch's (or a snapshot's) own levels above the values it carries: a value may nest as deep
# in a batch as in a point write.
OWN_DEPTH = {"payload": 3}
BATCHES = frozenset({"entries", "items"})  # walked entry by entry by their rule


MEMORY_RULES: dict[str, Rule] = {
    "home": _home,
    "clock": _has("now"),
    "create": _flag,
    "read_only": _flag,
    "hit_columns": _flag,
    "vector_budget_bytes": _integer(0, 2**50),  # prewarm_index: the stored vectors' memory, at most
    "embedder": _embedder,
    "new_id": _callable,
    "open_index": _callable,
    "key_dir": _home,
    "store": _text(max_chars=2000),  # a postgresql:// URL (api.memory.open_store says which)
    "embedder_options": _embedder_options,
    "name": _text(max_chars=200),
    "step": _callable,
    "tenant": _text(max_chars=200),
    "state": _instance(FactVersion),
    "progress": _callable,
    "actor": _text(max_chars=200),
    "worker": _text(max_chars=200),
    "limit": _integer(1, 10_000),
    "lease_s": _seconds,
    "kinds": _names,
    "identity": _instance(Identity),
    "payload": _object,
    "capacity": _integer(0, 10_000_000),
    "judge": _named,
    "settings": _instance(ResolverSettings),
    "origin": _text(max_chars=200),
    "calibration": _instance(Calibration),
    "llm": _has("complete_json"),
    "user": _text(max_chars=200),
    "agent": _text(max_chars=200),
    "namespaces": _names,
    "observer": _callable,
    "request_id": _text(max_chars=200),
    "max_attempts": _integer(1, 1000),
    "url": _text(max_chars=2000),
    "events": _names,
    "secret": _text(max_chars=200),
    "webhook_id": _text(max_chars=200),
    "apply": _flag,
    "policy": _instance(DeliveryPolicy),
    "transport": _has("post"),
    "merger": _named,
    "summarizer": _has("summarize"),  # Memory.summarize_sessions (api/lineage_ops.py)
    "min_cosine": _unit,
    "window_days": _integer(1, 365),
    "stale_days": _integer(1, 36_500),
    "phase": _text(max_chars=20),  # the reflect phase: ReflectService names the known ones
    "extractor": _named,  # observe_extract: an extractor (extraction.model.Extractor)
}


def _lookup(rules: Mapping[str, Rule]) -> Callable[[str, str], Rule | None]:
    """The rule of an op's argument: the op's own where it has one (``OP_RULES``), else its name's."""
    if rules is not TOOL_RULES:
        return lambda op, name: rules.get(name)
    return lambda op, name: OP_RULES.get((op, name)) or rules.get(name)


def guard_ops(rules: Mapping[str, Rule]) -> Callable[[type], type]:
    """Class decorator: every public method (and classmethod) checks its arguments first."""
    return guard_class(_lookup(rules), OWN_DEPTH, BATCHES)


def unchecked(cls: type, rules: Mapping[str, Rule]) -> list[str]:
    """The ``op.argument`` names of ``cls``'s public ops that no rule covers (a test keeps it empty)."""
    return uncovered(cls, _lookup(rules))
