"""Every public op of the Memory tool and of ``Memory``, called with arbitrary arguments: plausible
values mixed with garbage (lone surrogates, NUL, NaN / inf / huge numbers, deep and
self-containing structures, sets, bytes, naive datetimes, objects, unknown options, missing and
extra arguments). Each call either succeeds or raises a ``MemcoreError`` (never another
exception), and a refused call leaves the store exactly as it was: every table of the home, and
for SQL memory every table of the scope's database.

All examples share one home (seeded with a fact, a graph fact, a document and a SQL table), so a
call runs beside whatever the earlier ones wrote. The default run is small; ``make test-slow``
runs thousands of examples and prints what it saw.
"""

from __future__ import annotations

import json
import traceback
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, Identity, Memory, MemoryTool
from memory_core.errors import MemcoreError
from memory_core.identity import Scope
from memory_core.wire import encode
from tests.conftest import T0, store_snapshot
from tests.fuzz import ARGS, _step, calls, parameters, public_ops
from tests.fuzz_values import GARBAGE, FromStore

REMEMBERED = ("frame", "decision", "interaction", "receipt")

# Memory's ops that take no caller input (or only wire the ports together): nothing to fuzz.
MEMORY_EXEMPT = {"close", "flush", "repair_projections", "verify_audit"}
SQL_SCOPES = (Scope.USER, Scope.AGENT, Scope.TENANT)


class World:
    def __init__(self, root) -> None:
        self.root = root
        self.clock = FixedClock(T0)
        self.memory = Memory.open(root / "home", clock=self.clock, embedder="hashing")
        self.tools = [
            self.memory.for_run(Identity(tenant="acme", user="ana", agent="helper", session="s1", run="r1")),
            self.memory.for_run(Identity(tenant="acme", user="root", agent="ops", admin=True)),
        ]
        tool = self.tools[0]
        tool.set("k1", "Berlin")
        tool.set("k1", "Paris")
        tool.set("city", "Paris", subject="ana", relations=[["ana", "lives_in", "paris"]])
        tool.doc_put("readme", "# Readme\n\nAna lives in Berlin.\n", metadata={"lang": "en"})
        tool.sql_exec("CREATE TABLE t (a INTEGER, b VARCHAR)")
        admin = self.tools[1]
        admin.lens_define("dev", capabilities=["read", "capture", "decide"])
        admin.lens_define("seen", entity_types=["lesson"])
        admin.lens_assign("dev", "agent:helper")
        admin.lens_define("keep", capabilities=["read", "decide"])  # no fuzzed call names it: never changed
        admin.lens_assign("keep", "agent:helper")
        self.memory.register_step("noop", _step)
        self.homes = 0
        self.seen: Counter[tuple[str, str]] = Counter()

    def resolve(self, tool: MemoryTool, value: Any) -> Any:
        if not isinstance(value, FromStore):
            return value
        if value.what == "snapshot":
            payload = tool.snapshot()
            if value.tamper == "digest":
                payload["content_sha256"] = "0" * 64
            elif value.tamper == "value" and payload["rows"]:
                payload["rows"][0]["value"] = "\ud800"
            elif value.tamper == "row":
                payload["rows"].append({"key": "x"})
            elif value.tamper == "id":
                payload["snapshot_id"] = 5
            return payload
        if value.what == "version_id":
            rows = self.memory.store.versions.history(tool.identity.namespace("user"), "k1")
            return rows[0].id if rows else "no-such-version"
        if value.what in REMEMBERED:
            return remembered(tool, value)
        if value.what == "identity":
            return Identity(tenant="acme", user="ana", agent="helper")
        if value.what == "state":
            return self.tools[0].history("k1")[0]
        if value.what == "home":
            self.homes += 1
            home = self.root / f"opened-{self.homes}"
            variants = {
                None: home,
                "str": str(home),
                "surrogate": str(home) + "\ud800",
                "nul": str(home) + "\x00",
                "file": self.root / "home" / "memory.duckdb",
                "escaped": str(self.root / "\udcff"),
            }
            return variants[value.tamper]
        raise AssertionError(value)

    def sql_tables(self, tool: MemoryTool) -> dict:
        out = {}
        for scope in SQL_SCOPES:
            namespace = tool.identity.sql_namespace(scope)
            names = self.memory.sql.run(
                namespace, "SELECT table_name FROM information_schema.tables ORDER BY 1", None, query_only=True
            )
            out[scope] = {
                name: self.memory.sql.run(namespace, f'SELECT * FROM "{name}" ORDER BY ALL', None, query_only=True).rows
                for (name,) in names.rows
            }
        return out

    def state(self, tool: MemoryTool, sql: bool) -> tuple:
        return store_snapshot(self.memory), self.sql_tables(tool) if sql else None

    def call(self, owner: Any, op: str, args: tuple, kwargs: dict[str, Any]) -> None:
        tool = owner if isinstance(owner, MemoryTool) else self.tools[0]
        kwargs = {k: self.resolve(tool, v) for k, v in kwargs.items()}
        before = self.state(tool, sql=op == "sql_exec")
        try:
            result = getattr(owner, op)(*args, **kwargs)
        except MemcoreError as exc:
            self.seen[(op, exc.code)] += 1
            assert exc.code and isinstance(exc.message, str) and 400 <= exc.status < 600 and exc.status != 500
            json.dumps(exc.to_dict(), default=repr)  # a face can always answer it
            after = self.state(tool, sql=op == "sql_exec")
            assert after == before, f"{op} was refused ({exc.code}) but changed the store"
            return
        except Exception as exc:  # noqa: BLE001 - the property under test: no other exception escapes
            raise AssertionError(
                f"{op}(*{args!r:.300}, **{kwargs!r:.600}) raised {type(exc).__name__}: {exc!s:.300}\n"
                + "".join(traceback.format_exception(exc)[-6:])
            ) from exc
        self.seen[(op, "ok")] += 1
        if op == "open":
            result.close()
        if op == "namespace_delete":
            # Brought back at once: the world is shared by every op's test, in whatever order
            # (and on whichever worker) they run, and a later op must not find its scope deleted.
            owner.namespace_register(**{k: v for k, v in kwargs.items() if k == "scope"})


def remembered(tool: MemoryTool, value: FromStore) -> Any:
    """A frame, decision, interaction or receipt of the calling tool's, made now (or spoilt)."""
    if value.tamper == "missing":
        return "0" * 32
    if value.what == "frame":
        frame = tool.frame_open("fix", "fuzz")
        return tool.frame_close(frame.frame_id).frame_id if value.tamper == "closed" else frame.frame_id
    if value.what == "decision":
        return tool.decide("act", "fuzz", lens_id="keep").decision_id
    view = tool.render(lenses=["keep"])
    if value.what == "interaction":
        return view.interaction_id
    receipt = encode(view.receipt)
    spoilt = {
        "field": {"consumer": "agent:mallory"},
        "signature": {"signature": "00" * 64},
        "extra": {"extra": 1},
        "key": {"key_id": "0" * 16},
    }
    return {**receipt, **spoilt.get(value.tamper, {})}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = World(tmp_path_factory.mktemp("fuzz"))
    yield w
    w.memory.close()


TOOL_OPS = public_ops(MemoryTool)
MEMORY_OPS = [op for op in public_ops(Memory) if op not in MEMORY_EXEMPT]
# Memory.open's arguments: homes under the test's folder only (garbage text would be a path).
OPEN_ARGS = {
    "home": st.builds(FromStore, st.just("home"), st.sampled_from([None, "str"])),
    "embedder": st.one_of(st.none(), st.sampled_from(["hashing", "none", "openai", "nope"])),
    "clock": st.one_of(st.none(), st.just(FixedClock(T0))),
    "create": st.booleans(),
    "read_only": st.booleans(),
    "llm": st.one_of(st.none(), st.just("not a model")),
    # Never a reachable server: a fuzzed open must not create schemas there.
    "store": st.one_of(
        st.none(),
        st.sampled_from(["", "memory.duckdb", "mysql://h/db", "postgresql://127.0.0.1:1/x?schema=Not-A-Name"]),
    ),
}
OPEN_GARBAGE = {"home": st.builds(FromStore, st.just("home"), st.sampled_from(["surrogate", "nul", "file", "escaped"]))}


@st.composite
def tool_calls(draw, ops: list[str]) -> tuple:
    op = draw(st.sampled_from(ops))
    args, kwargs = draw(calls(MemoryTool, op))
    return draw(st.integers(0, 3)) == 0, op, args, kwargs


@st.composite
def memory_calls(draw, ops: list[str]) -> tuple:
    op = draw(st.sampled_from(ops))
    if op != "open":
        return (op, *draw(calls(Memory, op)))
    kwargs = {}
    for name, strategy in OPEN_ARGS.items():
        if name == "home" or draw(st.booleans()):
            corrupt = draw(st.integers(0, 4)) == 0
            kwargs[name] = draw(OPEN_GARBAGE.get(name, GARBAGE) if corrupt else strategy)
    if draw(st.integers(0, 4)) == 0:
        kwargs.update(draw(st.dictionaries(st.sampled_from(["dim", "base_url", "model", "junk"]), GARBAGE, max_size=2)))
    return op, (), kwargs


def run_tool_fuzz(world: World, ops: list[str], examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(tool_calls(ops))
    def property_(call):
        admin, op, args, kwargs = call
        world.call(world.tools[1 if admin else 0], op, args, kwargs)

    property_()


def run_memory_fuzz(world: World, ops: list[str], examples: int) -> None:
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(memory_calls(ops))
    def property_(call):
        op, args, kwargs = call
        world.call(world.memory, op, args, kwargs)

    property_()


def test_every_public_op_of_the_tool_and_of_memory_is_fuzzed():
    # A new op is fuzzed as soon as it exists (the ops are enumerated from the class); every
    # argument it takes needs a plausible value here, and Memory's ops are fuzzed or exempt.
    assert len(TOOL_OPS) >= 44 and "set" in TOOL_OPS and "known_types" in TOOL_OPS
    missing = [
        f"{op}.{p.name}"
        for cls, ops in ((MemoryTool, TOOL_OPS), (Memory, MEMORY_OPS))
        for op in ops
        if op != "open"
        for p in parameters(cls, op)
        if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and (op, p.name) not in ARGS and p.name not in ARGS
    ]
    assert missing == []
    open_params = {p.name for p in parameters(Memory, "open") if p.kind is not p.VAR_KEYWORD}
    # new_id and open_index: their defaults are the only sane values; key_dir: a folder, as home
    assert open_params - set(OPEN_ARGS) <= {"new_id", "open_index", "key_dir"}
    assert set(public_ops(Memory)) == set(MEMORY_OPS) | MEMORY_EXEMPT


@pytest.mark.parametrize("op", TOOL_OPS)
def test_each_tool_op_succeeds_or_refuses_typed_and_a_refusal_changes_nothing(world, op):
    run_tool_fuzz(world, [op], 6)
    assert world.seen[(op, "ok")] + sum(n for (o, _), n in world.seen.items() if o == op) > 0


@pytest.mark.parametrize("op", MEMORY_OPS)
def test_each_memory_op_succeeds_or_refuses_typed_and_a_refusal_changes_nothing(world, op):
    run_memory_fuzz(world, [op], 6)


@pytest.mark.slow
def test_fuzz_at_scale(world):
    run_tool_fuzz(world, TOOL_OPS, 4000)
    run_memory_fuzz(world, MEMORY_OPS, 600)
    ops = Counter(op for op, _ in world.seen.elements())
    refused = sum(n for (_, code), n in world.seen.items() if code != "ok")
    print(f"fuzz: {sum(world.seen.values())} calls, {refused} refused (typed, store unchanged), 0 untyped")
    print("fuzz: calls by op:", dict(sorted(ops.items())))
    print("fuzz: codes:", dict(sorted(Counter(code for _, code in world.seen.elements()).items())))
    assert set(TOOL_OPS) <= set(ops)
