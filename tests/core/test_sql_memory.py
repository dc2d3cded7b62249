"""SQL memory: per-scope sandboxed databases; every escape refused or stopped, nothing changed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memory_core import Identity, Memory
from memory_core.adapters.duckdb.sql_memory import SqlLimits
from memory_core.errors import InvalidInput, ScopeForbidden, SqlFailed, SqlRefused, SqlTimeout
from memory_core.identity import Scope


@pytest.fixture
def memory(home, clock):
    with Memory.open(home, clock=clock) as m:
        yield m


@pytest.fixture
def tool(memory):
    t = memory.for_run(Identity(tenant="acme", user="ana", agent="helper"))
    t.sql_exec("CREATE TABLE meds (name VARCHAR, mg INTEGER)")
    t.sql_exec("INSERT INTO meds VALUES (?, ?), (?, ?)", ["ibuprofen", 400, "paracetamol", 500])
    return t


def snapshot(tool):
    tables = tool.sql_query("SELECT table_name FROM information_schema.tables ORDER BY 1").rows
    return tables, tool.sql_query("SELECT * FROM meds ORDER BY name").rows


def test_tables_rows_and_a_polars_frame(tool):
    result = tool.sql_query("SELECT name, mg FROM meds WHERE mg > $min ORDER BY mg", {"min": 100})
    assert result.columns == ("name", "mg") and result.rows == (("ibuprofen", 400), ("paracetamol", 500))
    frame = result.to_polars()
    assert frame.columns == ["name", "mg"] and frame["mg"].sum() == 900
    assert tool.sql_exec("UPDATE meds SET mg = 200 WHERE name = 'ibuprofen'").statement_type == "UPDATE"
    assert tool.sql_query("SELECT mg FROM meds WHERE name = 'ibuprofen'").rows == ((200,),)


def test_each_scope_has_its_own_database(memory, tool):
    bea = memory.for_run(Identity(tenant="acme", user="bea", agent="helper"))
    other_tenant = memory.for_run(Identity(tenant="globex", user="ana", agent="helper"))
    for stranger in (bea, other_tenant):
        with pytest.raises(SqlFailed):
            stranger.sql_query("SELECT * FROM meds")
    with pytest.raises(SqlFailed):
        tool.sql_query("SELECT * FROM meds", scope="agent")  # the same run, another scope
    tool.sql_exec("CREATE TABLE notes (t VARCHAR)", scope="tenant")
    assert bea.sql_query("SELECT count(*) FROM notes", scope="tenant").rows == ((0,),)  # the tenant's, shared
    with pytest.raises(SqlFailed):
        other_tenant.sql_query("SELECT count(*) FROM notes", scope="tenant")


def test_the_sql_scopes_grant_is_checked_and_named(memory):
    no_sql = memory.for_run(Identity(tenant="acme", user="ana", sql_scopes=frozenset({Scope.AGENT})))
    with pytest.raises(ScopeForbidden) as refused:
        no_sql.sql_query("SELECT 1")
    assert refused.value.details["grant"] == "sql_scopes" and "sql_scopes" in refused.value.message
    with pytest.raises(ScopeForbidden):
        no_sql.sql_exec("SELECT 1", scope="global")


def test_sql_query_reads_only_and_one_statement_per_call(tool):
    before = snapshot(tool)
    with pytest.raises(SqlRefused):
        tool.sql_query("DELETE FROM meds")
    with pytest.raises(InvalidInput):
        tool.sql_exec("DELETE FROM meds; SELECT 1")
    with pytest.raises(SqlFailed):
        tool.sql_exec("SELEC nonsense")
    assert snapshot(tool) == before


ESCAPES = [
    ("attach", "ATTACH '/tmp/memcore-escape.duckdb' AS other"),
    ("copy-to-file", "COPY meds TO '/tmp/memcore-escape.csv'"),
    ("copy-from-file", "COPY meds FROM '/etc/passwd'"),
    ("read-csv-passwd", "SELECT * FROM read_csv('/etc/passwd')"),
    ("read-text", "SELECT * FROM read_text('/etc/hostname')"),
    ("parquet-glob", "SELECT * FROM read_parquet('/tmp/**/*.parquet')"),
    ("glob-listing", "SELECT * FROM glob('/etc/*')"),
    ("ctas-from-file", "CREATE TABLE stolen AS SELECT * FROM read_csv('/etc/passwd')"),
    ("install", "INSTALL httpfs"),
    ("load", "LOAD httpfs"),
    ("httpfs-url", "SELECT * FROM read_csv('https://example.com/data.csv')"),
    ("s3-url", "SELECT * FROM read_parquet('s3://bucket/key.parquet')"),
    ("set-memory", "SET memory_limit = '64GB'"),
    ("set-external", "SET enable_external_access = true"),
    ("pragma-threads", "PRAGMA threads = 8"),
    ("reset-lock", "RESET lock_configuration"),
    ("export-db", "EXPORT DATABASE '/tmp/memcore-escape-export'"),
    ("import-db", "IMPORT DATABASE '/tmp'"),
    ("transaction", "COMMIT"),
    ("detach", "DETACH DATABASE memory"),
    ("persistent-secret", "CREATE PERSISTENT SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')"),
    ("call-pragma", "CALL pragma_version()"),
]


@pytest.mark.parametrize("statement", [s for _, s in ESCAPES], ids=[name for name, _ in ESCAPES])
def test_an_escape_is_refused_clearly_and_changes_nothing(tool, statement):
    before = snapshot(tool)
    with pytest.raises((SqlRefused, SqlFailed)) as refused:
        tool.sql_exec(statement)
    assert refused.value.message and refused.value.code in ("SQL_REFUSED", "SQL_ERROR")
    assert snapshot(tool) == before
    for leftover in ("/tmp/memcore-escape.duckdb", "/tmp/memcore-escape.csv", "/tmp/memcore-escape-export"):
        assert not os.path.exists(leftover)


def test_a_statement_that_never_ends_is_stopped_and_changes_nothing(home, clock):
    with Memory.open(home, clock=clock) as memory:
        memory.sql.limits = SqlLimits(timeout_s=1.0)
        tool = memory.for_run(Identity(tenant="acme", user="ana"))
        tool.sql_exec("CREATE TABLE t (n BIGINT)")
        with pytest.raises(SqlTimeout):
            tool.sql_exec("INSERT INTO t SELECT count(*) FROM range(1000000) a, range(1000000) b")
        assert tool.sql_query("SELECT count(*) FROM t").rows == ((0,),)


def test_a_huge_result_is_cut_to_max_rows(home, clock):
    with Memory.open(home, clock=clock) as memory:
        memory.sql.limits = SqlLimits(max_rows=100)
        result = memory.for_run(Identity(tenant="acme", user="ana")).sql_query("SELECT * FROM range(100000)")
        assert len(result.rows) == 100 and result.truncated


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT list(repeat('x', 1000)) FROM range(2000000)",
        "SELECT list(x) FROM generate_series(1, 10000000000) t(x)",
        "CREATE TABLE big AS SELECT repeat('y', 1000) AS s FROM generate_series(1, 5000000)",
    ],
    ids=["list-of-strings", "huge-generate-series", "ctas-generate-series"],
)
def test_a_memory_hungry_statement_is_stopped_and_changes_nothing(home, clock, statement):
    with Memory.open(home, clock=clock) as memory:
        memory.sql.limits = SqlLimits(memory_limit="64MB", timeout_s=5)
        tool = memory.for_run(Identity(tenant="acme", user="ana"))
        with pytest.raises((SqlRefused, SqlTimeout)):
            (tool.sql_exec if statement.startswith("CREATE") else tool.sql_query)(statement)
        assert tool.sql_query("SELECT count(*) FROM information_schema.tables WHERE table_name = 'big'").rows == ((0,),)


def test_the_database_files_are_named_by_digest(memory, tool):
    files = sorted(p.name for p in Path(memory.home, "sql").iterdir())
    assert files and all(name.startswith("user-") and "ana" not in name for name in files if name.endswith(".duckdb"))


def test_only_the_recently_used_databases_stay_open_and_a_closed_one_reopens_intact(memory):
    limit = memory.sql.limits.max_open
    tools = [memory.for_run(Identity(tenant="acme", user=f"user{i}")) for i in range(limit + 5)]
    for i, t in enumerate(tools):
        t.sql_exec("CREATE TABLE t (v INTEGER)")
        t.sql_exec("INSERT INTO t VALUES (?)", [i])
    assert memory.sql.open_count() == limit
    assert [t.sql_query("SELECT v FROM t").rows for t in tools] == [((i,),) for i in range(limit + 5)]
