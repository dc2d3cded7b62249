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

import os
from typing import Any, Callable, Mapping

from ..documents import validate_doc_key
from ..errors import InvalidInput, UnknownScope
from ..identity import Identity
from ..inputs import MAX_DEPTH, batch, check_tree, flag, integer, known_options, mapping, number, text, texts
from ..model import FactVersion
from ..resolver.actions import ResolverSettings
from ..retrieval.answer import MAX_ASK_K
from ..retrieval.calibration import Calibration
from ..temporal import parse_instant
from ..webhooks import DeliveryPolicy
from ..write.options import OPTION_NAMES
from ..write.settle import label_entry, validate_key, validate_memory_type
from .boundary import Rule, guard_class, uncovered

MAX_BODY_CHARS = 4_000_000  # a document body (chunked into values far below the value cap)
MAX_STATEMENT_CHARS = 100_000


def _later(value: Any, field: str, nullable: bool) -> None:
    """Checked whole by the op's own request builder (a transcript, a snapshot, settings)."""


def _set_option(value: Any, field: str, nullable: bool) -> None:
    """A ``set`` option: ``SetOptions.parse`` checks them all at once, the first thing ``set``
    does (``session.point.set_value``), before anything is read; checking twice would cost a
    point write about 1% more (35 µs)."""


def _key(value: Any, field: str, nullable: bool) -> None:
    validate_key(value)


def _optional_key(value: Any, field: str, nullable: bool) -> None:
    if value is not None:
        validate_key(value)


def _unit(value: Any, field: str, nullable: bool) -> None:
    number(value, field, low=0, high=1, low_open=False, optional=True)


def _doc_key(value: Any, field: str, nullable: bool) -> None:
    validate_doc_key(value)


def _memory_type(value: Any, field: str, nullable: bool) -> None:
    validate_memory_type(value)


def _scope(value: Any, field: str, nullable: bool) -> None:
    if not isinstance(value, str):  # a Scope is a str; Scope.parse names the unknown ones
        raise UnknownScope(f"scope must be one of agent, user, tenant, global; got {type(value).__name__}")


def _flag(value: Any, field: str, nullable: bool) -> None:
    flag(value, field)


def _instant(value: Any, field: str, nullable: bool) -> None:
    parse_instant(value, field)


def _text(*, blank: bool = False, max_chars: int | None = None) -> Rule:
    def rule(value: Any, field: str, nullable: bool) -> None:
        text(value, field, optional=nullable, blank=blank, **({"max_chars": max_chars} if max_chars else {}))

    return rule


def _integer(low: int, high: int) -> Rule:
    def rule(value: Any, field: str, nullable: bool) -> None:
        integer(value, field, low=low, high=high, optional=nullable)

    return rule


def _names(value: Any, field: str, nullable: bool) -> None:
    texts(value, field, optional=nullable)


def _batch(value: Any, field: str, nullable: bool) -> None:
    """A list of entries, each checked on its own: a refusal names the entry (its index)."""
    for index, entry in enumerate(batch(value, field)):
        try:
            check_tree(entry, field, MAX_DEPTH + 1)  # the entry object's own level
        except InvalidInput as exc:
            raise label_entry(exc, index) from None


def _object(value: Any, field: str, nullable: bool) -> None:
    mapping(value, field, optional=nullable)


_SQL_SCALARS = (str, int, float, bytes, type(None))


def _sql_params(value: Any, field: str, nullable: bool) -> None:
    """A list (for ``?``) or an object (for ``$name``) of plain values: no sets, no nesting."""
    if value is None:
        return
    if isinstance(value, Mapping):
        mapping(value, field)
        values = list(value.values())
    elif isinstance(value, (list, tuple)):
        values = list(value)
    else:
        raise InvalidInput(f"params must be a list or an object, got {type(value).__name__}", field=field)
    for item in values:
        if not isinstance(item, _SQL_SCALARS) or (isinstance(item, int) and not -(2**127) <= item < 2**127):
            raise InvalidInput(
                "each SQL parameter must be a string, a number (128-bit at most), bytes, a boolean or null",
                field=field,
            )


def _has(*methods: str) -> Rule:
    """An object that offers ``methods`` (an extractor, a judge, a clock): or None where that is the default."""

    def rule(value: Any, field: str, nullable: bool) -> None:
        if value is None and nullable:
            return
        if not all(callable(getattr(value, m, None)) for m in methods):
            raise InvalidInput(f"{field} must offer {', '.join(methods)}()", field=field)

    return rule


def _named(value: Any, field: str, nullable: bool) -> None:
    """An extractor or a judge: None (the default), or an object with a name and its method."""
    if value is None:
        return
    method = {"extractor": "extract", "merger": "merge"}.get(field, "judge")
    if not isinstance(getattr(value, "name", None), str) or not callable(getattr(value, method, None)):
        raise InvalidInput(f"{field} must have a name (a string) and a {method}() method", field=field)


def _callable(value: Any, field: str, nullable: bool) -> None:
    if not (value is None and nullable) and not callable(value):
        raise InvalidInput(f"{field} must be callable", field=field)


def _instance(cls: type) -> Rule:
    def rule(value: Any, field: str, nullable: bool) -> None:
        if not (value is None and nullable) and not isinstance(value, cls):
            raise InvalidInput(f"{field} must be a {cls.__name__}", field=field)

    return rule


def _home(value: Any, field: str, nullable: bool) -> None:
    """A folder's path: text UTF-8 can spell, without NUL (no file system takes one)."""
    if value is None and nullable:
        return
    path = os.fspath(value) if isinstance(value, (str, os.PathLike)) else None
    if not isinstance(path, str) or "\x00" in path:
        raise InvalidInput(f"{field} must be a path (a string or a Path, without NUL)", field=field)
    text(path, field)


def _embedder(value: Any, field: str, nullable: bool) -> None:
    if value is None or isinstance(value, str):
        text(value, field, optional=True)
    elif not callable(getattr(value, "embed", None)):
        raise InvalidInput("embedder must be a name (static, minilm, hashing, openai) or an embedder", field=field)


def _seconds(value: Any, field: str, nullable: bool) -> None:
    number(value, field, low=0, high=7 * 24 * 3600)


EMBEDDER_OPTIONS = ("api_key", "base_url", "dim", "model")


def _embedder_options(value: Any, field: str, nullable: bool) -> None:
    known_options(value, EMBEDDER_OPTIONS, "an embedder option")
    if "dim" in value:
        integer(value["dim"], "dim", low=1, high=65_536)
    for name in ("api_key", "base_url", "model"):
        text(value.get(name), name, optional=True)


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
    "min_cosine": _unit,
    "window_days": _integer(1, 365),
    "stale_days": _integer(1, 36_500),
    "phase": _text(max_chars=20),  # the reflect phase: ReflectService names the known ones
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
