"""Isolation as a property: random mixed-scope op sequences over three tenants, two users and two
agents each, read back through every read op. Nothing a run reads may come from another namespace.

Every value, document, SQL row and graph object written carries the tag of the namespace it was
written in (``tenant/scope/owner``); a read's whole answer is searched for tags, and any tag but
the reader's own is a leak. All examples share one memory home (each with its own three tenants),
so every read also runs beside everything the earlier examples wrote.
"""

from __future__ import annotations

import itertools
import json
import re
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import FixedClock, Identity, Memory
from memory_core.errors import AdminRequired, MemcoreError, NotFound, SqlFailed
from memory_core.wire import encode
from tests.conftest import T0

TAG = re.compile(r"x\d+t\d/(?:user|agent|tenant)/[a-z0-9]+")
SCOPES = ("user", "agent", "tenant")
KEYS = ("k1", "k2")
RUNS = [(t, u, a) for t in range(3) for u in ("u0", "u1") for a in ("a0", "a1")]
WRITES = ("set", "delete", "restore", "sql_insert", "doc_put", "doc_delete", "update", "update_by_id")
WRITES += ("clear", "namespace_delete")  # scope-wide: every other namespace lists the same after
WRITES += ("category_define", "assign_category", "link")  # categories and links: names carry the tag
WRITES += ("observe_record", "observe_crystallize")  # observation capture: a session per key
WRITES += ("say_rule",)  # learnings: a rule about the agent, in the user's own words (their tag)
READS = (
    "get",
    "list",
    "history",
    "recall",
    "search",
    "sql_query",
    "doc_get",
    "doc_list",
    "graph_recall",
    "list_facts",
    "events",
    "get_by_id",
    "belief_sources",
    "session_summaries",
    "categories",
    "links",
    "observe_status",
    "learnings",
)

op_strategy = st.tuples(
    st.sampled_from(WRITES + READS + WRITES),  # writes twice as likely: reads need something to read
    st.integers(0, len(RUNS) - 1),
    st.sampled_from(SCOPES),
    st.sampled_from(KEYS),
    st.integers(0, 9),
)


class World:
    """A shared memory home; each example gets fresh tenant names. Every ``per_home`` examples a
    new home starts, so a long run's reads do not slow down as the index grows."""

    per_home = 250

    def __init__(self, root) -> None:
        self.root = root
        self.clock = FixedClock(T0)
        self.memory = Memory.open(root / "home-0", clock=self.clock, embedder="hashing")
        self.examples = itertools.count()
        self.reads = {name: 0 for name in READS}
        self.ids: list[str] = []  # every fact and version id this example wrote, in any tenant
        self.current: list = []  # the runs of the example now running

    def tools(self):
        n = next(self.examples)
        if n and n % 100 == 0:
            print(f"isolation: {n} sequences, reads so far {sum(self.reads.values())}", flush=True)
        if n and n % self.per_home == 0:
            self.memory.close()
            self.memory = Memory.open(self.root / f"home-{n}", clock=self.clock, embedder="hashing")
        self.ids = []
        self.current = [
            self.memory.for_run(Identity(tenant=f"x{n}t{t}", user=u, agent=a, session="s")) for t, u, a in RUNS
        ]
        return self.current


def tag_of(ns) -> str:
    return f"{ns.tenant}/{ns.scope.value}/{ns.owner_id}"


def _write(world: World, tool, op, scope, key, value) -> None:
    ns = tool.identity.namespace(scope)
    tag = tag_of(ns)
    if op == "set":
        written = tool.set(
            key,
            f"note {tag} v{value}",
            scope=scope,
            kind="note",
            relations=[{"subject": "I", "relation": f"has {key}", "object": f"{tag} v{value}"}],
        )
        world.ids.extend(i for r in written.rows for i in (r.id, r.fact_id))
    elif op == "update":
        world.ids.extend(r.id for r in tool.update(key, f"note {tag} v{value}u", scope=scope).rows)
    elif op == "update_by_id":
        _update_by_id(world, tool, value)
    elif op in ("delete", "restore"):
        getattr(tool, op)(key, scope=scope)
    elif op == "sql_insert":
        sql_tag = tag_of(tool.identity.sql_namespace(scope))
        tool.sql_exec("CREATE TABLE IF NOT EXISTS t (k VARCHAR, v VARCHAR)", scope=scope)
        tool.sql_exec("INSERT INTO t VALUES (?, ?)", [key, f"{sql_tag} v{value}"], scope=scope)
    elif op == "doc_put":
        tool.doc_put(
            key,
            f"# Doc {tag}\n\nBody {tag} v{value}.\n",
            scope=scope,
            metadata={"subject": f"svc {tag}", "entity_type": "service", "fact_class": "runbook"},
        )
    elif op == "doc_delete":
        tool.doc_delete(key, scope=scope)
    elif op in ("clear", "namespace_delete"):
        _scope_wide(world, tool, op, scope, value)
    elif op == "category_define":  # a category name and a relation may spell the tag itself
        tool.category_define(f"c-{tag}", description=f"cat {tag} v{value}", scope=scope)
    elif op == "assign_category":
        tool.assign_category(key, f"c-{tag}", scope=scope, rescind=value % 3 == 0)
    elif op == "link":
        tool.link(key, "k2" if key == "k1" else "k1", relation=f"r-{tag}", scope=scope, unlink=value % 3 == 0)
    elif op == "observe_record":  # a crystallized session refuses more (409)
        tool.observe_record(f"s-{key}", [{"tool": f"t {tag}", "input": f"{tag} v{value}"}], scope=scope)
    elif op == "observe_crystallize":  # a session with no observations in the scope is missing (404)
        tool.observe_crystallize(f"s-{key}", scope=scope)
    elif op == "say_rule":  # filed to the learnings queue; its turn is evidence in the user's scope
        mine = tag_of(tool.identity.namespace("user"))
        tool.set_from_messages([{"role": "user", "content": f"Always answer in {mine} v{value}."}], scope="user")


def _views(world: World, tool, scope) -> dict[str, list]:
    """What every other namespace of the example's runs lists, by tag."""
    own = tool.identity.namespace(scope)
    seen: dict[str, list] = {}
    for other in world.current:
        for s in SCOPES:
            ns = other.identity.namespace(s)
            if ns != own and tag_of(ns) not in seen:
                seen[tag_of(ns)] = sorted((f.key, f.value_json) for f in other.list(scope=s))
    return seen


def _scope_wide(world: World, tool, op, scope, value) -> None:
    """``clear`` and ``namespace_delete`` touch the caller's namespace only: every other namespace
    lists the same before and after. A deleted namespace is often registered again at once; one
    left deleted refuses the example's later writes there (409)."""
    if op == "namespace_delete" and scope == "tenant":
        with pytest.raises(AdminRequired):
            tool.namespace_delete(scope=scope)  # the tenant's namespace is everyone's: admin only
        return
    before = _views(world, tool, scope)
    if op == "clear":
        own = tool.identity.namespace(scope)
        rows = tool.clear(scope=scope).rows
        assert {(r.tenant, r.scope, r.owner_id) for r in rows} <= {(own.tenant, own.scope, own.owner_id)}
    else:
        tool.namespace_delete(scope=scope)
        assert tool.list(scope=scope) == []
        if value % 2:
            tool.namespace_register(scope=scope)
    assert _views(world, tool, scope) == before


def _update_by_id(world: World, tool, value) -> None:
    """Revise a row by an id any tenant wrote: one out of reach answers missing and changes nothing."""
    if not world.ids:
        return
    row_id = world.ids[value % len(world.ids)]
    try:
        found = tool.get_by_id(row_id)
    except NotFound:
        with pytest.raises(NotFound):
            tool.update_by_id(row_id, f"note {tag_of(tool.identity.namespace('user'))} v{value}x")
        return
    assert found.tenant == tool.identity.tenant
    tool.update_by_id(row_id, f"note {found.tenant}/{found.scope.value}/{found.owner_id} v{value}x")


def _by_ids(world: World, tool) -> list:
    """``get_by_id`` of every id the example wrote: a row out of reach answers missing."""
    found = []
    for row_id in world.ids:
        try:
            found.append(tool.get_by_id(row_id).to_dict())
        except NotFound:
            continue
    return found


def _read(tool, op, scope, key):
    if op == "get":
        found = tool.get(key, scope=scope)
        return found.to_dict() if found else None
    if op == "list":
        return [f.to_dict() for f in tool.list(scope=scope)]
    if op == "history":
        return [r.to_dict() for r in tool.history(key, scope=scope)]
    if op in ("recall", "search"):
        return getattr(tool, op)(f"note v1 {key}", scope=scope, k=50).to_dict()
    if op == "sql_query":
        return tool.sql_query("SELECT k, v FROM t ORDER BY v", scope=scope).rows
    if op == "doc_get":
        found = tool.doc_get(key, scope=scope)
        return found.to_dict() if found else None
    if op == "doc_list":
        return [d.to_dict() for d in tool.doc_list(scope=scope)]
    if op == "graph_recall":
        return tool.graph_recall("I", scope=scope, hops=2).to_dict()
    if op == "events":  # the state-change stream, its values read back from the version rows
        return encode(tool.events(scopes=[scope], limit=1000))
    if op == "belief_sources":  # evidence links of the key's facts (none for a plain set)
        return tool.belief_sources(key, scope=scope)
    if op == "session_summaries":
        return tool.session_summaries(scope=scope)
    if op == "categories":  # the scope's taxonomy, and the key's categories
        return encode([tool.categories(scope=scope), tool.categories(scope=scope, key=key)])
    if op == "links":
        return encode(tool.links(key, scope=scope))
    if op == "observe_status":  # a session's state: its counts and the identity-free result
        return tool.observe_status(f"s-{key}", scope=scope)
    if op == "learnings":  # the candidates the run's user supports, with only their own words
        return encode(tool.learnings(status="all"))
    return [f.to_dict() for f in tool.list_facts("I", scope=scope)]


def _check(world: World, tool, op, scope) -> None:
    """Read through ``op`` and through every other read op: only the reader's tag may appear (for
    ``get_by_id``, which reads every scope the run reaches, the tags of those scopes)."""
    own = tag_of(tool.identity.sql_namespace(scope) if op == "sql_query" else tool.identity.namespace(scope))
    for read in (op, *READS):
        try:
            answer = _by_ids(world, tool) if read == "get_by_id" else _read(tool, read, scope, "k1")
        except (NotFound, SqlFailed):  # nothing there yet in this scope
            continue
        if read == "get_by_id" and not answer:
            continue
        world.reads[read] += 1
        text = json.dumps(answer, default=str)
        seen = set(TAG.findall(text))
        expected = {tag_of(tool.identity.sql_namespace(scope)) if read == "sql_query" else own}
        if read == "get_by_id":
            expected = {tag_of(tool.identity.namespace(s)) for s in SCOPES}
        if read == "learnings":  # scope-less: a user's rules carry their user tag, whatever the scope read
            expected = {tag_of(tool.identity.namespace("user"))}
        assert seen <= expected, (read, expected, seen)


def run_sequence(world: World, ops, finals) -> None:
    tools = world.tools()
    for op, who, scope, key, value in ops:
        world.clock.advance(timedelta(seconds=1))
        tool = tools[who]
        if op in WRITES:
            try:
                _write(world, tool, op, scope, key, value)
            except MemcoreError as exc:  # nothing to delete or restore: refused, and nothing changes
                assert exc.status in (404, 409), exc
        else:
            _check(world, tool, op, scope)
    # Then some runs (often ones that wrote nothing) read a scope through every read op.
    for who, scope in finals:
        _check(world, tools[who], "get", scope)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    w = World(tmp_path_factory.mktemp("isolation"))
    yield w
    w.memory.close()


def _property(examples: int):
    @settings(
        max_examples=examples,
        deadline=None,
        derandomize=False,
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(
        ops=st.lists(op_strategy, min_size=1, max_size=8),
        finals=st.lists(st.tuples(st.integers(0, len(RUNS) - 1), st.sampled_from(SCOPES)), min_size=2, max_size=2),
    )
    def check(world, ops, finals):
        run_sequence(world, ops, finals)

    return check


# A sequence that writes every plane in one scope and reads it back through every op, beside a
# second run of the same tenant: whatever the random examples draw, every read op runs.
EVERY_READ = [
    ("set", 0, "user", "k1", 1),
    ("observe_record", 0, "user", "k1", 1),
    ("sql_insert", 0, "user", "k1", 1),
    ("doc_put", 0, "user", "k1", 1),
    ("set", 1, "user", "k1", 2),
    ("set", 0, "user", "k2", 1),
    ("category_define", 0, "user", "k1", 1),
    ("assign_category", 0, "user", "k1", 1),
    ("link", 0, "user", "k1", 1),
    ("get", 0, "user", "k1", 0),
    ("say_rule", 0, "user", "k1", 1),
    ("get", 1, "user", "k1", 0),
]


def test_no_read_op_leaks_across_tenants_users_agents_or_scopes(world):
    run_sequence(world, EVERY_READ, [(0, "user"), (5, "tenant")])
    assert all(world.reads.values()), world.reads  # every read op was exercised
    _property(60)(world)


@pytest.mark.slow
def test_no_leak_over_two_thousand_sequences(world):
    run_sequence(world, EVERY_READ, [(0, "user"), (5, "tenant")])
    _property(2000)(world)
    assert next(world.examples) >= 2000
    # Reads count only where something was there to read (a SQL table, a key's history): rarer ops
    # still run tens of times.
    assert all(count >= 50 for count in world.reads.values()), world.reads
    print("isolation: reads by op over 2,000 sequences:", world.reads)


def test_no_read_op_leaks_over_a_postgresql_authority(tmp_path):
    """The same property with every home opened over PostgreSQL: there the scope filters are the
    authority's SQL, not DuckDB's, and a leak in one of them would show only here. The fixed
    sequence runs every read op; then as many random sequences as the DuckDB run's."""
    from memory_core.adapters.postgres.home import PgHome
    from tests.pg import on_postgres

    with on_postgres():
        world = World(tmp_path)
        try:
            assert isinstance(world.memory.store, PgHome)
            run_sequence(world, EVERY_READ, [(0, "user"), (5, "tenant")])
            assert all(world.reads.values()), world.reads
            _property(60)(world)
        finally:
            world.memory.close()
