"""Two tenants and two users never see each other's rows through any op, SQL memory included."""

from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory_core import Identity, Memory
from memory_core.errors import NotFound, SqlFailed

RUNS = [("acme", "ana"), ("acme", "bob"), ("globex", "ana"), ("globex", "bob")]


def _every_read(tool, key, scope, indexed=False):
    """All that one run can learn about ``key`` in ``scope`` through every read op."""
    got = tool.get(key, scope=scope)
    listed = [(f.key, f.value) for f in tool.list(scope=scope)]
    try:
        history = [r.value for r in tool.history(key, scope=scope)]
    except NotFound:
        history = []
    if indexed:  # through the retrieval index too
        for recipe in ("hybrid_rrf", "hybrid_zscore"):
            listed += [(h.key, h.value) for h in tool.search("value", scope=scope, recipe=recipe, k=50).hits]
    return (got.value if got else None), listed, history


@pytest.mark.faces  # through the service too (random sequences over HTTP: tests/service/test_isolation_http.py)
def test_each_run_sees_only_its_own_user_and_tenant_rows(memory):
    tools = {run: memory.for_run(Identity(tenant=run[0], user=run[1], agent="helper")) for run in RUNS}
    for (tenant, user), tool in tools.items():
        tool.set("secret", f"{tenant}/{user}", scope="user")
        tool.set(f"only-{tenant}-{user}", 1, scope="user")
    for tenant in ("acme", "globex"):
        tools[(tenant, "ana")].set("policy", f"{tenant}-policy", scope="tenant")
    for (tenant, user), tool in tools.items():
        value, listed, history = _every_read(tool, "secret", "user")
        assert value == f"{tenant}/{user}"
        assert sorted(listed) == sorted([("secret", f"{tenant}/{user}"), (f"only-{tenant}-{user}", 1)])
        assert history == [f"{tenant}/{user}"]
        assert _every_read(tool, "policy", "tenant")[0] == f"{tenant}-policy"
        for t2, u2 in RUNS:
            if (t2, u2) != (tenant, user):
                assert tool.get(f"only-{t2}-{u2}", scope="user") is None
        # Writes never cross either: deleting one's own key leaves the others.
    tools[("acme", "ana")].delete("secret")
    assert tools[("acme", "bob")].get("secret").value == "acme/bob"
    assert tools[("globex", "ana")].get("secret").value == "globex/ana"
    with pytest.raises(NotFound):
        tools[("globex", "ana")].restore("only-acme-ana")


op_strategy = st.tuples(
    st.sampled_from(["set", "delete", "restore", "sql_insert"]),
    st.sampled_from(range(len(RUNS))),
    st.sampled_from(["user", "tenant", "agent"]),
    st.sampled_from(["k1", "k2"]),
    st.integers(0, 3),
)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(op_strategy, min_size=1, max_size=25))
def test_random_op_sequences_never_leak_across_tenants_or_users(tmp_path_factory, ops):
    home = tmp_path_factory.mktemp("iso")
    from memory_core import FixedClock
    from tests.conftest import T0

    clock = FixedClock(T0)
    with Memory.open(home, clock=clock, embedder="hashing") as memory:
        tools = [memory.for_run(Identity(tenant=t, user=u, agent=f"agent-{u}")) for t, u in RUNS]
        written: dict[tuple, set] = {}
        for op, who, scope, key, value in ops:
            clock.advance(timedelta(seconds=1))
            tool = tools[who]
            ns = tool.identity.namespace(scope)
            try:
                if op == "set":
                    tool.set(key, f"value {who}:{value}", scope=scope)
                    written.setdefault((ns, key), set()).add(f"value {who}:{value}")
                elif op == "sql_insert":
                    tool.sql_exec("CREATE TABLE IF NOT EXISTS t (k VARCHAR, v VARCHAR)", scope=scope)
                    tool.sql_exec("INSERT INTO t VALUES (?, ?)", [key, f"sql {who}:{value}"], scope=scope)
                    written.setdefault(("sql", tool.identity.sql_namespace(scope)), set()).add(f"sql {who}:{value}")
                else:
                    getattr(tool, op)(key, scope=scope)
            except NotFound:
                pass
            except Exception as exc:  # noqa: BLE001 - NothingToRestore is fine; anything else is a bug
                assert exc.__class__.__name__ == "NothingToRestore"
        for tool in tools:
            for scope in ("user", "tenant", "agent"):
                ns = tool.identity.namespace(scope)
                for key in ("k1", "k2"):
                    value, listed, history = _every_read(tool, key, scope)
                    allowed = written.get((ns, key), set())
                    seen = {value} - {None} | {v for k, v in listed if k == key} | set(history)
                    assert seen <= allowed, (ns, key, seen, allowed)
                    # Nothing listed or found under another key may come from another namespace either.
                    others = {v for k, v in listed} - set().union(
                        *(written.get((ns, k2), set()) for k2 in ("k1", "k2"))
                    )
                    assert not others, (ns, others)
                sql_ns = tool.identity.sql_namespace(scope)
                try:
                    rows = {v for _, v in tool.sql_query("SELECT k, v FROM t", scope=scope).rows}
                except SqlFailed:  # this scope's database has no table t: nothing written there
                    rows = set()
                assert rows == written.get(("sql", sql_ns), set()), (sql_ns, rows)
