"""Strategies for fuzzing the public ops, shared by the Python fuzz (tests/core/test_fuzz_ops.py)
and the CLI's (tests/cli/test_cli_fuzz.py).

Each argument has, by name, a pair in ``ARGS``: a good strategy (well-formed values, so most
calls get past the checks and write, read and change the store) and a near one (the wrong type,
blank or non-UTF-8 text, out-of-range or non-finite numbers, malformed instants, structures with
one bad leaf). A call corrupts up to two of its arguments with a near miss or with ``GARBAGE``
(lone surrogates, NUL, NaN / inf / huge numbers, deep or self-containing structures, sets,
bytes, naive datetimes, objects); now and then it names an unknown option, drops an argument or
adds a positional one.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

from hypothesis import strategies as st

from memory_core.extraction.pipeline import BUILTIN_STEPS
from memory_core.extraction.rules import RuleExtractor
from memory_core.identity import Scope
from memory_core.resolver.actions import ResolverSettings
from memory_core.resolver.judge import RuleJudge
from memory_core.retrieval.calibration import Calibration
from memory_core.webhooks import DeliveryPolicy
from tests.fuzz_compounding import COMPOUNDING_ARGS
from tests.fuzz_dreams import DREAMS_ARGS
from tests.fuzz_profiles import PROFILE_ARGS
from tests.fuzz_reflect import REFLECT_ARGS
from tests.fuzz_remember import REMEMBER_ARGS
from tests.fuzz_surface import SURFACE_ARGS
from tests.fuzz_values import (
    ANY_TEXT,
    AWARE,
    BAD_NUMBERS,
    ENTRY_GOOD,
    ENTRY_NEAR,
    GARBAGE,
    HEX,
    INSTANT_GOOD,
    INSTANT_NEAR,
    ITEM_GOOD,
    ITEM_NEAR,
    JSON_GOOD,
    JSON_NEAR,
    KEY_GOOD,
    KEY_NEAR,
    MARKDOWN_GOOD,
    MARKDOWN_NEAR,
    MESSAGE_GOOD,
    MESSAGE_NEAR,
    NAME_GOOD,
    NAME_NEAR,
    NEAR_TEXT,
    ONTOLOGY_GOOD,
    ONTOLOGY_NEAR,
    RELATIONS_GOOD,
    RELATIONS_NEAR,
    SETTING_VALUES,
    SETTINGS_GOOD,
    SETTINGS_NEAR,
    SQL_GOOD,
    SQL_NEAR,
    SQL_PARAMS_NEAR,
    TEXT,
    FromStore,
    batch,
)


def _step(state: Any, context: Any) -> None:
    """A registered step that does nothing (an operator's step is the operator's code)."""


def names_list(size: int = 2) -> tuple[st.SearchStrategy, st.SearchStrategy]:
    return st.lists(NAME_GOOD, max_size=size), st.one_of(
        st.lists(st.one_of(NAME_GOOD, NAME_NEAR), min_size=1, max_size=size), NAME_GOOD, st.none()
    )


def instants() -> tuple[st.SearchStrategy, st.SearchStrategy]:
    return INSTANT_GOOD, INSTANT_NEAR


def flags() -> tuple[st.SearchStrategy, st.SearchStrategy]:
    return st.booleans(), st.sampled_from(["yes", "no", "", 1, 0, None, "false"])


def ints(low: int, high: int) -> tuple[st.SearchStrategy, st.SearchStrategy]:
    return st.integers(low, high), st.one_of(
        st.sampled_from([low - 1, high + 1, True, str(low), float(low)]), BAD_NUMBERS
    )


def texts(good: st.SearchStrategy = TEXT) -> tuple[st.SearchStrategy, st.SearchStrategy]:
    return good, NEAR_TEXT


def optional(pair: tuple[st.SearchStrategy, st.SearchStrategy]) -> tuple[st.SearchStrategy, st.SearchStrategy]:
    return st.one_of(st.none(), pair[0]), pair[1]


# (good, near) for each argument, by name (``(op, name)`` where an op means something else).
ARGS: dict[Any, tuple[st.SearchStrategy, st.SearchStrategy]] = {
    "key": (KEY_GOOD, KEY_NEAR),
    "peer_key": (KEY_GOOD, KEY_NEAR),
    "value": (JSON_GOOD, JSON_NEAR),
    "scope": (
        st.sampled_from(["user", "agent", "tenant", Scope.USER, "USER "]),
        st.one_of(st.sampled_from(["global", "auto", "team"]), NEAR_TEXT),
    ),
    ("set", "scope"): (st.sampled_from(["user", "agent", "tenant", "auto"]), st.sampled_from(["global", "team"])),
    "dry_run": flags(),
    "hit_columns": flags(),
    "apply": flags(),
    "pin": flags(),
    "proposed": flags(),
    "kind": (st.sampled_from(["fact", "note"]), st.one_of(st.sampled_from(["rumour", "document"]), NEAR_TEXT)),
    "memory_type": (st.sampled_from(["general", "preference", "residence"]), st.one_of(NEAR_TEXT, st.just("t" * 201))),
    **{
        name: instants()
        for name in ("valid_at", "invalid_at", "observed_at", "as_of", "known_at", "observed_from", "observed_to")
    },
    "to": (st.one_of(st.sampled_from(["2024-01-01T00:00:00Z", "2024-06-01T09:00:00Z"]), AWARE), INSTANT_NEAR),
    "session_date": instants(),
    "subject": optional(texts(NAME_GOOD)),
    ("list_facts", "subject"): texts(NAME_GOOD),
    ("placement", "subject"): texts(NAME_GOOD),
    ("place_fact", "subject"): texts(NAME_GOOD),
    ("known_types", "subject"): texts(NAME_GOOD),
    "subject_type": optional(texts(st.sampled_from(["person", "project", "city"]))),
    ("placement", "subject_type"): texts(st.sampled_from(["person", "project", "city"])),
    ("place_fact", "subject_type"): texts(st.sampled_from(["person", "project", "city"])),
    "relations": (RELATIONS_GOOD, RELATIONS_NEAR),
    "context": optional(texts()),
    "ttl_seconds": (st.one_of(st.floats(0.5, 1e7), st.integers(1, 10**6)), BAD_NUMBERS),
    "on_expire": (st.sampled_from(["tombstone", "demote", "anonymize"]), st.one_of(st.just("explode"), NEAR_TEXT)),
    "if_match_sha256": (HEX, NEAR_TEXT),
    "sensitivity": (st.sampled_from(["normal", "high"]), st.one_of(st.just("secret"), NEAR_TEXT)),
    "source_class": (st.sampled_from(["derived", "external", "imported"]), st.sampled_from(["stated", "gospel", ""])),
    "confidence": (st.floats(0.01, 1), st.one_of(BAD_NUMBERS, st.just(1.5), st.just(True))),
    "source_quote": optional(texts()),
    "source_turn": optional(texts()),
    "source_span": (
        st.tuples(st.integers(0, 20), st.integers(20, 50)).map(list),
        st.sampled_from([[5, 1], [-1, 2], [0], [0, 2**40], "0,2", [True, 3]]),
    ),
    "compaction_generation": ints(0, 3),
    "entries": batch(ENTRY_GOOD, ENTRY_NEAR),
    "items": batch(ITEM_GOOD, ITEM_NEAR),
    "query": texts(st.sampled_from(["where does ana live", "k1", "berlin"])),
    "question": texts(st.sampled_from(["where does ana live", "what is k1"])),
    "k": ints(1, 20),
    "recipe": (
        st.sampled_from(["hybrid_zscore", "hybrid_rrf", "hybrid_lexical", "vector_only", "bm25_only"]),
        st.just("magic"),
    ),
    "sources": (
        st.lists(st.sampled_from(["fact", "note", "document"]), min_size=1, max_size=3),
        st.one_of(st.just([]), st.just("fact"), st.lists(st.sampled_from(["graph", "sql"]), min_size=1, max_size=2)),
    ),
    "token_budget": ints(1, 500),
    "participants": names_list(),
    # A cursor or trace id nobody was given: refused as unknown; malformed ones as bad input.
    "cursor": optional(texts(st.sampled_from(["0" * 32 + ":10", "f" * 32 + ":0"]))),
    "trace_id": texts(st.sampled_from(["0" * 32, "f" * 32])),
    "statement": (SQL_GOOD, SQL_NEAR),
    "params": (st.none(), SQL_PARAMS_NEAR),
    "version": ints(1, 4),
    "version_id": (st.just(FromStore("version_id")), NEAR_TEXT),
    "payload": (
        st.just(FromStore("snapshot")),
        st.builds(FromStore, st.just("snapshot"), st.sampled_from(["digest", "value", "row", "id"])),
    ),
    "doc_key": (st.sampled_from(["readme", "notes", "guide"]), st.one_of(st.just("a#b"), NEAR_TEXT)),
    "body": (MARKDOWN_GOOD, MARKDOWN_NEAR),
    "metadata": (
        st.one_of(
            st.none(),
            st.fixed_dictionaries({}, optional={"lang": TEXT, "pages": st.integers(0, 9)}),
            st.just({"subject": "ana", "entity_type": "person", "fact_class": "profile"}),
        ),
        st.one_of(
            st.dictionaries(
                st.sampled_from(["subject", "entity_type", "lang"]), SETTING_VALUES, min_size=1, max_size=3
            ),
            st.just({"n": float("nan")}),
            st.just(["lang", "en"]),
        ),
    ),
    "title": optional(texts()),
    "entity": texts(NAME_GOOD),
    "hops": ints(1, 3),
    "relation": optional(texts(st.sampled_from(["lives_in", "likes"]))),
    "messages": batch(MESSAGE_GOOD, MESSAGE_NEAR),
    "session": optional(texts()),
    "steps": (
        st.one_of(st.none(), st.lists(st.sampled_from([*BUILTIN_STEPS, "noop"]), min_size=1, max_size=2)),
        st.one_of(st.just(["nope"]), st.just("noop"), st.just([])),
    ),
    "extractor": (st.one_of(st.none(), st.just(RuleExtractor())), st.sampled_from(["rules", RuleJudge()])),
    "max_attempts": ints(1, 50),
    "queue_ids": (st.one_of(st.none(), st.lists(TEXT, max_size=2)), st.one_of(st.just("xq-1"), st.just([5]))),
    "decision": (st.sampled_from(["retire_peer", "clear"]), st.one_of(st.just("maybe"), NEAR_TEXT)),
    "settings": (SETTINGS_GOOD, SETTINGS_NEAR),
    "markdown": (ONTOLOGY_GOOD, ONTOLOGY_NEAR),
    "known_types": names_list(),
    "profile_owner": optional(texts(NAME_GOOD)),
    # Memory's own ops
    "actor": texts(st.sampled_from(["worker:expiry-sweep", "ops"])),
    "worker": optional(texts(st.sampled_from(["w1", "w2"]))),
    "limit": ints(1, 10),
    "lease_s": (st.floats(0.1, 600), BAD_NUMBERS),
    "kinds": (
        st.lists(st.sampled_from(["extract", "harvest"]), max_size=2),
        st.one_of(st.just("extract"), st.just([1])),
    ),
    "capacity": ints(0, 10),
    "vector_budget_bytes": ints(0, 2**50),
    "name": (st.just("noop"), st.one_of(st.sampled_from(list(BUILTIN_STEPS)), NEAR_TEXT)),
    "step": (st.just(_step), st.just("not callable")),
    "tenant": (st.just("acme"), NEAR_TEXT),
    # erasure: of a tenant the other ops' world never reads (an erasure that succeeds is final)
    ("erase", "tenant"): (st.just("scratch"), NEAR_TEXT),
    "user": optional(texts(st.sampled_from(["ana", "bea"]))),
    "agent": optional(texts(st.just("helper"))),
    "namespaces": (
        st.one_of(st.none(), st.lists(st.sampled_from(["user/ana", "agent/helper"]), min_size=1, max_size=2)),
        st.one_of(st.just([]), st.just(["ana"]), st.just(["global/x"]), st.just("user/ana"), st.lists(NEAR_TEXT)),
    ),
    "observer": (st.none(), st.just("not callable")),
    "request_id": optional(texts(st.just("0123456789abcdef"))),
    # change webhooks (nothing listens on port 9: a delivery fails fast)
    "url": (st.just("http://127.0.0.1:9/hook"), st.one_of(st.sampled_from(["ftp://x", "127.0.0.1:9"]), NEAR_TEXT)),
    "events": (
        st.one_of(st.none(), st.lists(st.sampled_from(["memory.written", "memory.erased"]), min_size=1)),
        st.one_of(st.just([]), st.just(["memory.exploded"]), st.just("memory.written"), st.lists(NEAR_TEXT)),
    ),
    "secret": (st.one_of(st.none(), st.just("s" * 32)), st.one_of(st.just("short"), NEAR_TEXT)),
    "webhook_id": (st.just("0123456789abcdef"), NEAR_TEXT),
    "policy": (
        st.one_of(st.none(), st.just(DeliveryPolicy(timeout_s=0.5, posts_per_pass=2))),
        st.sampled_from([{"timeout_s": 1}, "fast"]),
    ),
    "transport": (st.none(), st.just("http")),
    "judge": (st.one_of(st.none(), st.just(RuleJudge())), st.sampled_from(["rules", RuleExtractor()])),
    ("resolve", "settings"): (st.one_of(st.none(), st.just(ResolverSettings())), st.just({"floor": 0.5})),
    "calibration": (
        st.just(Calibration("hashing-256", "hybrid_zscore", (0.0, 4.0, 0.0, 0.0, 0.0, 0.0), -1.0, 0.1)),
        st.sampled_from([{"coef": [1.0, 2.0, 3.0]}, "calibration.json", None]),
    ),
    ("bank_harvest", "payload"): (
        st.fixed_dictionaries(
            {
                "messages": st.lists(MESSAGE_GOOD, min_size=1, max_size=2),
                "boundary": st.sampled_from(["compaction", "recap"]),
                "generation": st.integers(0, 3),
                "session": TEXT,
                "identity": st.just({"tenant": "acme", "user": "ana", "agent": "helper"}),
            }
        ),
        st.one_of(
            st.dictionaries(ANY_TEXT, JSON_NEAR, max_size=2),
            st.just([1]),
            st.just({"messages": [{"role": "user", "content": "hi"}]}),
            st.fixed_dictionaries(
                {
                    "messages": st.lists(st.one_of(MESSAGE_GOOD, MESSAGE_NEAR), min_size=1, max_size=2),
                    "boundary": st.sampled_from(["compaction", "lunch"]),
                    "generation": st.sampled_from([0, -1, "1"]),
                    "session": ANY_TEXT,
                    "identity": st.sampled_from([{"tenant": "acme"}, {}, "acme", {"tenant": 5}]),
                }
            ),
        ),
    ),
    "origin": texts(st.sampled_from(["memory.api", "test"])),
    "identity": (st.just(FromStore("identity")), st.sampled_from(["acme", {"tenant": "acme"}])),
    "state": (st.just(FromStore("state")), st.just({"key": "k1"})),
    "progress": (st.one_of(st.none(), st.just(lambda done, total: None)), st.just(5)),
    **REMEMBER_ARGS,
    **COMPOUNDING_ARGS,
    **DREAMS_ARGS,
    **PROFILE_ARGS,
    **REFLECT_ARGS,
    **SURFACE_ARGS,
}


def strategies(op: str, name: str) -> tuple[st.SearchStrategy, st.SearchStrategy]:
    return ARGS.get((op, name)) or ARGS[name]


def public_ops(cls: type) -> list[str]:
    """The public methods a class defines (its ops), properties and dunders left out."""
    return sorted(
        name
        for name, member in vars(cls).items()
        if not name.startswith("_") and (inspect.isfunction(member) or isinstance(member, classmethod))
    )


def parameters(cls: type, op: str) -> list[inspect.Parameter]:
    return list(inspect.signature(getattr(cls, op)).parameters.values())[1:]


@st.composite
def calls(draw: Callable[[st.SearchStrategy], Any], cls: type, op: str) -> tuple[tuple, dict[str, Any]]:
    """Arguments for one call of ``op``: every one good, or up to two of them a near miss or garbage;
    now and then an unknown option, a missing argument or an extra positional one."""
    params = parameters(cls, op)
    named = [p.name for p in params if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)]
    corrupt: set[str] = set()
    if named and draw(st.sampled_from(["clean", "clean", "corrupt"])) == "corrupt":
        corrupt = draw(st.sets(st.sampled_from(named), min_size=1, max_size=2))
    kwargs: dict[str, Any] = {}
    for p in params:
        if p.kind is p.VAR_KEYWORD:
            if p.name == "settings":
                kwargs.update(draw(st.one_of(*strategies(op, p.name))))
            continue
        good, near = strategies(op, p.name)
        if p.name in corrupt:
            kwargs[p.name] = draw(st.one_of(near, near, GARBAGE))
        elif p.default is p.empty or draw(st.booleans()):
            kwargs[p.name] = draw(good)
    args: tuple = ()
    shape = draw(st.sampled_from(["as is"] * 17 + ["unknown option", "missing", "extra"]))
    if shape == "unknown option":
        kwargs[draw(st.sampled_from(["bogus", "scope_", "dryrun", "ttl"]))] = draw(GARBAGE)
    elif shape == "missing" and kwargs:
        kwargs.pop(draw(st.sampled_from(sorted(kwargs))))
    elif shape == "extra":
        args = (draw(GARBAGE),) * draw(st.integers(1, 3))
    return args, kwargs
