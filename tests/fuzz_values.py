"""The values the fuzz draws from (tests/fuzz.py names them per argument): well-formed values
and near misses of each kind, and ``GARBAGE`` (lone surrogates, NUL, NaN / inf / huge numbers,
deep or self-containing structures, sets, bytes, naive datetimes, objects)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from hypothesis import strategies as st

SURROGATES = ["\ud800", "x\udfff", "\udcff\udcfe", "ok\ud83d", "\udc80"]
NUL = ["\x00", "k\x00", "2024-01-01T00:00:00Z\x00", "2024-01-01T00:00:00\x00+00:00", "a\x00b\x1f"]
BAD_TEXT = st.sampled_from(SURROGATES + NUL)
BAD_NUMBERS = st.sampled_from(
    [float("nan"), float("inf"), -float("inf"), 1e300, -1e300, 2**64, -(2**64), 10**400, 0, -1, -0.0, 5e-324, 2**63]
)
WORDS = ["ana", "berlin", "paris", "acme", "k1", "k2", "city", "likes tea", "Caroline", "é中文"]
TEXT = st.sampled_from(WORDS)
NEAR_TEXT = st.one_of(st.text(max_size=8), st.sampled_from(["", "  "]), BAD_TEXT)
ANY_TEXT = st.one_of(TEXT, NEAR_TEXT)


def nested(depth: int, kind: str = "list") -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value] if kind == "list" else {"a": value}
    return value


def cyclic(kind: str) -> Any:
    loop: Any = [] if kind == "list" else {}
    if kind == "list":
        loop.append(loop)
    else:
        loop["self"] = loop
    return loop


DEEP = st.one_of(
    st.builds(nested, st.integers(30, 40), st.sampled_from(["list", "dict"])),
    st.builds(nested, st.integers(900, 5000), st.sampled_from(["list", "dict"])),
    st.builds(cyclic, st.sampled_from(["list", "dict"])),
)
UTC = timezone.utc
AWARE = st.datetimes(min_value=datetime(2000, 1, 1), max_value=datetime(2030, 1, 1), timezones=st.just(UTC))
ODD_DATETIMES = st.one_of(
    st.datetimes(),  # naive
    st.just(datetime.min.replace(tzinfo=timezone(timedelta(hours=14)))),
    st.just(datetime.max.replace(tzinfo=timezone(timedelta(hours=-14)))),
    st.just(datetime.max.replace(tzinfo=UTC)),
    st.just(datetime.min.replace(tzinfo=UTC)),
)
OBJECTS = st.sampled_from([object(), Ellipsis, int, print, timedelta(1), NotImplemented])
SCALAR_GARBAGE = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(),
    BAD_NUMBERS,
    st.text(max_size=12),
    BAD_TEXT,
    st.binary(max_size=6),
    ODD_DATETIMES,
    OBJECTS,
)
GARBAGE = st.one_of(
    SCALAR_GARBAGE,
    st.recursive(
        SCALAR_GARBAGE,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3),
            st.dictionaries(st.one_of(st.text(max_size=4), BAD_TEXT, st.integers()), inner, max_size=3),
            st.tuples(inner, inner),
        ),
        max_leaves=6,
    ),
    DEEP,
    st.frozensets(st.integers(), max_size=3),
    st.sets(st.text(max_size=3), max_size=3),
)


def json_values(leaf_text: st.SearchStrategy) -> st.SearchStrategy:
    return st.recursive(
        st.one_of(st.none(), st.booleans(), st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6), leaf_text),
        lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(leaf_text, inner, max_size=3)),
        max_leaves=6,
    )


JSON_GOOD = json_values(st.one_of(TEXT, st.text(max_size=10)))
JSON_NEAR = st.one_of(
    json_values(ANY_TEXT),
    DEEP,
    BAD_NUMBERS,
    st.frozensets(st.integers(), max_size=2),
    st.just("x" * 1_000_001),
    st.just({1: "int name", "a": 2}),
)
ISO_NEAR = st.sampled_from(
    [
        "2024-01-01T00:00:00",  # naive
        "2024-01-01",
        "last tuesday",
        "9999-12-31T23:59:59Z",
        "0001-01-01T00:00:00Z",
        "9999-12-31T23:59:59-05:00",
        "20240101T000000+0000",
        "2024-W01-1T00:00+00:00",
        "2024-13-45T00:00:00Z",
    ]
)
INSTANT_GOOD = st.one_of(st.none(), st.sampled_from(["2024-01-01T00:00:00Z", "2023-06-01T12:00:00+02:00"]), AWARE)
INSTANT_NEAR = st.one_of(ISO_NEAR, BAD_TEXT, ODD_DATETIMES)


class FromStore:
    """An argument read from the store when the call is made (a real snapshot, a version id)."""

    def __init__(self, what: str, tamper: Any = None) -> None:
        self.what, self.tamper = what, tamper

    def __repr__(self) -> str:
        return f"FromStore({self.what!r}, {self.tamper!r})"


KEY_GOOD = st.sampled_from(["k1", "k2", "city", "doc:readme", "import:x"])
KEY_NEAR = st.one_of(st.just("a" * 513), st.just("k\n"), NEAR_TEXT)
NAME_GOOD = st.sampled_from(["ana", "berlin", "caroline", "user", "Paris"])
NAME_NEAR = st.one_of(NEAR_TEXT, st.just("x" * 201))
RELATION_NAMES = st.sampled_from(["lives_in", "likes", "works at"])


def relations(name: st.SearchStrategy, instant: st.SearchStrategy, size: int = 3) -> st.SearchStrategy:
    return st.one_of(
        st.lists(st.tuples(name, RELATION_NAMES, name).map(list), max_size=size),
        st.lists(
            st.fixed_dictionaries(
                {"subject": name, "relation": RELATION_NAMES, "object": name},
                optional={"valid_at": instant, "invalid_at": instant, "subject_type": name, "object_type": name},
            ),
            max_size=size,
        ),
    )


RELATIONS_GOOD = st.one_of(st.none(), relations(NAME_GOOD, INSTANT_GOOD))
RELATIONS_NEAR = st.one_of(
    relations(st.one_of(NAME_GOOD, NAME_NEAR), st.one_of(INSTANT_GOOD, INSTANT_NEAR)),
    relations(NAME_GOOD, INSTANT_GOOD, 12).filter(lambda r: len(r) > 8),
    st.just("ana|lives_in|paris"),
    st.just([["ana", "lives_in"]]),
)
ENTRY_OPTIONS_GOOD = {
    "kind": st.sampled_from(["fact", "note"]),
    "valid_at": INSTANT_GOOD,
    "pin": st.booleans(),
    "ttl_seconds": st.floats(1, 1e6),
    "confidence": st.floats(0.01, 1),
    "subject": NAME_GOOD,
    "relations": RELATIONS_GOOD,
}
ENTRY_OPTIONS_NEAR = {
    "kind": st.sampled_from(["rumour", "FACT "]),
    "valid_at": INSTANT_NEAR,
    "pin": st.sampled_from(["yes", 1, 0, None]),
    "ttl_seconds": BAD_NUMBERS,
    "confidence": BAD_NUMBERS,
    "subject": NAME_NEAR,
    "relations": RELATIONS_NEAR,
    "bogus_option": st.just(1),
}
ENTRY_GOOD = st.fixed_dictionaries({"key": KEY_GOOD, "value": JSON_GOOD}, optional=ENTRY_OPTIONS_GOOD)
ENTRY_NEAR = st.one_of(
    st.fixed_dictionaries({"key": st.one_of(KEY_GOOD, KEY_NEAR), "value": JSON_NEAR}),
    st.fixed_dictionaries({"key": KEY_NEAR, "value": JSON_GOOD}),
    st.fixed_dictionaries({"key": KEY_GOOD, "value": JSON_GOOD}, optional=ENTRY_OPTIONS_NEAR),
    st.fixed_dictionaries({"value": JSON_GOOD}),
    GARBAGE,
)
ITEM_GOOD = st.one_of(
    TEXT,
    st.fixed_dictionaries(
        {"text": TEXT},
        optional={"valid_at": INSTANT_GOOD, "kind": st.sampled_from(["note", "fact"]), "subject": NAME_GOOD},
    ),
)
ITEM_NEAR = st.one_of(
    NEAR_TEXT,
    st.fixed_dictionaries({"text": ANY_TEXT}, optional={"valid_at": INSTANT_NEAR, "x": TEXT, "kind": GARBAGE}),
    GARBAGE,
)
MESSAGE_GOOD = st.fixed_dictionaries(
    {
        "role": st.sampled_from(["user", "assistant"]),
        "content": st.one_of(
            TEXT, st.sampled_from(["I live in Paris.", "I moved to Rome yesterday.", "We met in 0000."])
        ),
    },
    optional={"name": NAME_GOOD, "id": TEXT, "at": INSTANT_GOOD},
)
MESSAGE_NEAR = st.one_of(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "wizard", None]), "content": st.one_of(ANY_TEXT, GARBAGE)},
        optional={"name": NAME_NEAR, "id": GARBAGE, "at": INSTANT_NEAR, "extra": TEXT},
    ),
    GARBAGE,
)


def batch(good: st.SearchStrategy, near: st.SearchStrategy) -> tuple[st.SearchStrategy, st.SearchStrategy]:
    """A list of good items; or one with a near miss among good ones (or not a list at all)."""
    with_one_bad = st.tuples(st.lists(good, max_size=3), near, st.lists(good, max_size=2)).map(
        lambda parts: [*parts[0], parts[1], *parts[2]]
    )
    return st.lists(good, max_size=4), st.one_of(
        with_one_bad,
        st.lists(good, max_size=3).map(tuple),
        st.lists(good, max_size=3).map(lambda items: {repr(i): i for i in items}),
        st.just(iter([{"key": "k", "value": 1}])),
    )


SQL_GOOD = st.sampled_from(
    [
        "CREATE TABLE IF NOT EXISTS t (a INTEGER, b VARCHAR)",
        "INSERT INTO t VALUES (1, 'one')",
        "SELECT * FROM t",
        "SELECT count(*) FROM t",
        "DELETE FROM t WHERE a > 100",
    ]
)
SQL_NEAR = st.sampled_from(
    [
        "INSERT INTO t VALUES (?, ?)",
        "INSERT INTO t VALUES ($a, $b)",
        "SELECT ?",
        "DROP TABLE IF EXISTS t",
        "PRAGMA version",
        "ATTACH 'x.db'",
        "COPY t TO 'x.csv'",
        "SELECT 1; SELECT 2",
        "SELECT '\ud800'",
        "SELECT 'a\x00b'",
        "SET threads = 4",
        "BEGIN TRANSACTION",
        "LOAD httpfs",
        "SELEKT",
        "CREATE MACRO m(x) AS x + 1",
        "SELECT 'nan'::DOUBLE",
        "",
    ]
)
SQL_SCALAR = st.one_of(st.none(), st.integers(-5, 5), st.floats(), TEXT, NEAR_TEXT, st.binary(max_size=3), BAD_NUMBERS)
SQL_PARAMS_NEAR = st.one_of(
    st.lists(SQL_SCALAR, max_size=2),
    st.dictionaries(st.sampled_from(["a", "b"]), SQL_SCALAR, max_size=2),
    st.sets(st.integers(), max_size=2),
    st.lists(st.lists(st.integers(), max_size=2), min_size=1, max_size=2),
)
MARKDOWN_GOOD = st.sampled_from(
    ["# Readme\n\nAna lives in Berlin.\n\n## More\n\ntext\n", "plain text", "# Only a title", "x\n" * 700]
)
MARKDOWN_NEAR = st.one_of(NEAR_TEXT, st.just("#" * 10_000), st.just("é" * 4_000_001))
ONTOLOGY_GOOD = st.sampled_from(
    [
        "## person\n- `@memory_scope` user\n\n## project\n- `@memory_scope` tenant\n",
        "## service\n- `@memory_scope` tenant\n",
    ]
)
ONTOLOGY_NEAR = st.one_of(
    st.sampled_from(
        ["# nothing useful", "## two words\n", "- `@memory_scope` user\n", "## a\n- `@memory_scope` moon\n"]
    ),
    NEAR_TEXT,
)
SETTING_NAMES = [
    "policy",
    "char_limit",
    "bulk_check_cap",
    "retention_days",
    "blacklist",
    "single_valued",
    "conflict_threshold",
    "duplicate_threshold",
    "dedup_threshold",
    "sensitive_retention_days",
    "retype_to",
    "embedded",
    "on_expire",
    "key_identified",
    "resolver_retire_confidence",
    "daily_cost_cap_usd",
]
SETTINGS_GOOD = st.one_of(
    st.fixed_dictionaries({}, optional={"char_limit": st.integers(100, 20_000), "bulk_check_cap": st.integers(0, 100)}),
    st.fixed_dictionaries(
        {}, optional={"retention_days": st.integers(1, 3650), "conflict_threshold": st.floats(0.5, 1)}
    ),
)
SETTING_VALUES = st.one_of(
    st.integers(-5, 10**6), st.floats(), BAD_NUMBERS, ANY_TEXT, st.booleans(), st.lists(ANY_TEXT, max_size=2), st.none()
)
SETTINGS_NEAR = st.dictionaries(
    st.sampled_from([*SETTING_NAMES, "no_such_setting"]), SETTING_VALUES, min_size=1, max_size=2
)
HEX = st.text("0123456789abcdef", min_size=64, max_size=64)
