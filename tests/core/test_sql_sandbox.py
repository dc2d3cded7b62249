"""SQL memory's guard: every statement type classified, no host path disclosed, parameters typed."""

from __future__ import annotations

import itertools
import os
import tempfile
from pathlib import Path

import duckdb
import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.adapters.duckdb.sql_guard import EXEC_TYPES, QUERY_TYPES, REFUSED_TYPES, statement_type
from memory_core.adapters.duckdb.sql_worker import PLACEHOLDER, Scrubber
from memory_core.errors import InvalidInput, SqlRefused
from tests.conftest import T0


@pytest.fixture(scope="module")
def memory(tmp_path_factory):
    # One home and one SQL worker for the module; each test gets a fresh scope (its own database).
    with Memory.open(tmp_path_factory.mktemp("sandbox") / "home", clock=FixedClock(T0)) as m:
        yield m


_users = itertools.count()


@pytest.fixture
def tool(memory):
    t = memory.for_run(Identity(tenant="acme", user=f"user{next(_users)}", agent="helper"))
    t.sql_exec("CREATE TABLE meds (name VARCHAR, mg INTEGER)")
    t.sql_exec("INSERT INTO meds VALUES (?, ?), (?, ?)", ["ibuprofen", 400, "paracetamol", 500])
    return t


def snapshot(tool):
    tables = tool.sql_query("SELECT table_name FROM information_schema.tables ORDER BY 1").rows
    return tables, tool.sql_query("SELECT * FROM meds ORDER BY name").rows


def host_paths(memory) -> set[str]:
    paths = {str(memory.home), os.path.realpath(memory.home), str(Path.home()), os.getcwd()}
    if tempfile.gettempdir() not in ("/tmp", "/var/tmp"):
        paths.add(tempfile.gettempdir())
    return paths


def assert_no_host_path(memory, shown: object) -> None:
    text = repr(shown)
    assert not [p for p in host_paths(memory) if p in text], text


# --- statement types ----------------------------------------------------------------------------


def test_every_statement_type_duckdb_names_is_classified():
    named = set(duckdb.StatementType.__members__)
    assert named == EXEC_TYPES | REFUSED_TYPES, named ^ (EXEC_TYPES | REFUSED_TYPES)
    assert not EXEC_TYPES & REFUSED_TYPES and QUERY_TYPES <= EXEC_TYPES


SAMPLES = {
    "SELECT": "SELECT 1",
    "INSERT": "INSERT INTO meds VALUES ('aspirin', 100)",
    "UPDATE": "UPDATE meds SET mg = mg WHERE false",
    "CREATE": "CREATE TABLE extra (v INTEGER)",
    "DELETE": "DELETE FROM meds WHERE false",
    "PREPARE": "PREPARE p AS SELECT 1",
    "EXECUTE": "EXECUTE p",
    "ALTER": "ALTER TABLE meds ADD COLUMN note VARCHAR",
    "TRANSACTION": "BEGIN TRANSACTION",
    "COPY": "COPY meds TO 'meds.csv'",
    "EXPLAIN": "EXPLAIN SELECT * FROM meds",
    "DROP": "DROP TABLE IF EXISTS nothing_here",
    "EXPORT": "EXPORT DATABASE 'out'",
    "PRAGMA": "PRAGMA version",
    "VACUUM": "VACUUM",
    "CALL": "CHECKPOINT",
    "SET": "SET threads = 4",
    "LOAD": "LOAD json",
    "ATTACH": "ATTACH ':memory:' AS other",
    "DETACH": "DETACH other",
    "MULTI": "PIVOT meds ON name USING sum(mg)",
    "MERGE_INTO": "MERGE INTO meds USING (SELECT 'x' AS name) s ON meds.name = s.name WHEN MATCHED THEN DELETE",
}


@pytest.mark.parametrize("expected", sorted(SAMPLES))
def test_each_statement_type_is_allowed_or_refused_typed(memory, tool, expected):
    statement = SAMPLES[expected]
    assert statement_type(statement) == expected
    if expected in EXEC_TYPES:
        assert tool.sql_exec(statement).statement_type == expected
        if expected not in QUERY_TYPES:
            with pytest.raises(SqlRefused):
                tool.sql_query(statement)
        return
    before = snapshot(tool)
    for run in (tool.sql_exec, tool.sql_query):
        with pytest.raises(SqlRefused) as refused:
            run(statement)
        assert refused.value.details["statement_type"] == expected
    assert snapshot(tool) == before


@pytest.mark.parametrize("statement", ["UPDATE EXTENSIONS", "UPDATE EXTENSIONS (httpfs)"])
def test_a_statement_type_the_binding_cannot_name_is_refused_typed(tool, statement):
    with pytest.raises(SqlRefused) as refused:
        tool.sql_exec(statement)
    assert refused.value.status == 403 and refused.value.details["statement_type"] == "UNKNOWN"


def test_sql_query_rolls_back_what_explain_analyze_ran(tool):
    before = snapshot(tool)
    assert tool.sql_query("EXPLAIN ANALYZE DELETE FROM meds").statement_type == "EXPLAIN"
    assert snapshot(tool) == before


# --- host paths ---------------------------------------------------------------------------------

DISCLOSURES = [
    ("settings", "SELECT * FROM duckdb_settings()"),
    ("settings-bare", "FROM duckdb_settings()"),
    ("settings-quoted", 'SELECT * FROM "duckdb_settings"()'),
    ("settings-case", "SELECT value FROM DuckDB_Settings() WHERE name = 'home_directory'"),
    ("settings-quoted-case", 'SELECT * FROM "DUCKDB_SETTINGS"()'),
    ("settings-qualified", "SELECT * FROM system.main.duckdb_settings()"),
    ("settings-comments", "SELECT * FROM /* a comment */ duckdb_settings /* another */ () -- tail"),
    ("settings-summarize", "SUMMARIZE SELECT * FROM duckdb_settings()"),
    ("databases", "SELECT path FROM duckdb_databases()"),
    ("databases-view", "SELECT * FROM main.duckdb_databases"),
    ("current-setting-home", "SELECT current_setting('home_directory')"),
    ("current-setting-secret", "SELECT CURRENT_SETTING('secret_directory')"),
    ("current-setting-temp", "SELECT \"current_setting\"('temp_directory')"),
    ("extensions", "SELECT install_path FROM duckdb_extensions()"),
    ("secrets", "SELECT * FROM duckdb_secrets()"),
    ("which-secret", "SELECT * FROM which_secret('s3://bucket/key', 's3')"),
    ("pragma-database-list", "SELECT * FROM pragma_database_list"),
    ("pragma-table-function", "SELECT * FROM pragma_database_size()"),
    ("pragma-statement", "PRAGMA database_list"),
    ("call-pragma", "CALL pragma_database_list()"),
    ("temporary-files", "SELECT * FROM duckdb_temporary_files()"),
    ("getenv", "SELECT getenv('HOME')"),
    ("logs", "SELECT * FROM duckdb_logs"),
    ("pg-settings", "SELECT * FROM pg_catalog.pg_settings"),
    ("query-built-name", "SELECT * FROM query('SELECT * FROM duck' || 'db_settings()')"),
    ("query-table", "SELECT * FROM query_table('duckdb_databases')"),
    ("serialized-sql", "SELECT * FROM json_execute_serialized_sql(json_serialize_sql('SELECT 1'))"),
    ("view-over-settings", "CREATE VIEW leak AS SELECT * FROM duckdb_settings()"),
    ("macro-over-setting", "CREATE MACRO leak() AS current_setting('home_directory')"),
]


@pytest.mark.parametrize("statement", [s for _, s in DISCLOSURES], ids=[n for n, _ in DISCLOSURES])
def test_settings_and_catalog_that_reveal_host_paths_are_refused(memory, tool, statement):
    before = snapshot(tool)
    with pytest.raises(SqlRefused) as refused:
        tool.sql_exec(statement)
    assert refused.value.code == "SQL_REFUSED"
    assert_no_host_path(memory, refused.value.to_dict())
    assert snapshot(tool) == before


def test_a_denied_name_in_a_string_or_as_a_column_is_only_data(memory, tool):
    tool.sql_exec("CREATE TABLE notes (query VARCHAR, body VARCHAR)")
    tool.sql_exec("INSERT INTO notes VALUES ('duckdb_settings()', 'current_setting(''home_directory'')')")
    assert tool.sql_query("SELECT query, body FROM notes").rows == (
        ("duckdb_settings()", "current_setting('home_directory')"),
    )


CATALOG_READS = [
    "SHOW ALL TABLES",
    "SHOW DATABASES",
    "DESCRIBE meds",
    "SUMMARIZE meds",
    "SELECT current_database(), current_schema()",
    "SELECT * FROM duckdb_tables()",
    "SELECT * FROM duckdb_columns()",
    "SELECT * FROM duckdb_schemas()",
    "SELECT * FROM information_schema.schemata",
    "SELECT * FROM pg_catalog.pg_database",
    "EXPLAIN ANALYZE SELECT * FROM meds",
]


@pytest.mark.parametrize("statement", CATALOG_READS)
def test_the_catalog_reads_that_pass_show_no_host_path(memory, tool, statement):
    result = tool.sql_query(statement)
    assert result.rows
    assert_no_host_path(memory, result.to_dict())


def test_a_host_path_in_a_cell_a_column_name_or_an_error_is_scrubbed(memory, tool):
    root = memory.home / "sql"
    inside = f"{root}/user-abc.duckdb"
    result = tool.sql_query(f'SELECT ? AS p, encode(?) AS b, 1 AS "{Path.home()}/col"', [inside, inside])
    assert result.rows == ((f"{PLACEHOLDER}/user-abc.duckdb", f"{PLACEHOLDER}/user-abc.duckdb".encode(), 1),)
    assert result.columns[2] == f"{PLACEHOLDER}/col"
    ordinary = ("Etc/UTC", "python/3.11", "/tmp/notes.txt", "a/b")  # not host paths: left as they are
    assert tool.sql_query("SELECT ?, ?, ?, ?", list(ordinary)).rows == (ordinary,)
    with pytest.raises(SqlRefused) as refused:  # the engine's own message names the file it refused
        tool.sql_query(f"SELECT * FROM read_csv('{root}/x.csv')")
    assert PLACEHOLDER in refused.value.message
    assert_no_host_path(memory, refused.value.to_dict())


def test_the_scrubber_replaces_whole_paths_in_nested_values_and_leaves_lookalikes():
    scrub = Scrubber({"/home/ana/.memory/sql", "/home/ana", "/tmp", "/"})
    value = {"k /home/ana/x": ["/home/ana/.memory/sql/db", b"/home/ana", ("/home/anatomy", "/home/ana.")]}
    assert scrub(value) == {
        f"k {PLACEHOLDER}/x": [f"{PLACEHOLDER}/db", PLACEHOLDER.encode(), ("/home/anatomy", f"{PLACEHOLDER}.")]
    }
    assert scrub("/tmp/x and /") == "/tmp/x and /"  # generic folders are no secret: left alone
    assert scrub(42) == 42


# --- parameters and text ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "params",
    [{"ibuprofen", 400}, frozenset({1}), {1: "x"}, {"": 1}, [b"bytes"], [[1, 2]], [{"a": 1}], [object()], "ab", 5],
    ids=["set", "frozenset", "int-key", "empty-key", "bytes", "list", "dict", "object", "str", "int"],
)
def test_params_must_be_a_list_or_a_str_keyed_dict_of_scalars(tool, params):
    before = snapshot(tool)
    with pytest.raises(InvalidInput) as refused:
        tool.sql_exec("INSERT INTO meds VALUES (?, ?)", params)
    assert refused.value.status == 422 and refused.value.details["field"] == "params"
    assert snapshot(tool) == before


def test_tuple_and_named_params_of_scalars_pass(tool):
    tool.sql_exec("INSERT INTO meds VALUES (?, ?)", ("aspirin", 100))
    assert tool.sql_query("SELECT mg FROM meds WHERE name = $n AND $flag", {"n": "aspirin", "flag": True}).rows == (
        (100,),
    )
    assert tool.sql_query("SELECT ?::DOUBLE + 1, ? IS NULL", [0.5, None]).rows == ((1.5, True),)


@pytest.mark.parametrize(
    "statement, params",
    [("SELECT '\ud800'", None), ("SELECT ?", ["\udfff"]), ("SELECT $x", {"\ud800": 1})],
    ids=["statement", "param-value", "param-key"],
)
def test_text_with_a_lone_surrogate_is_invalid_input(tool, statement, params):
    with pytest.raises(InvalidInput) as refused:
        tool.sql_query(statement, params)
    assert refused.value.status == 422
