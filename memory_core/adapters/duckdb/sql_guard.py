"""What SQL memory lets through, decided before a statement reaches the engine.

Three checks, each a typed refusal: the statement's type (every type DuckDB names is classified;
one the binding cannot name is refused), the names it calls (settings, catalog and logging
functions that reveal host paths, and the ones that run SQL assembled from strings, which would
let a name be built past this check), and its text and parameters (well-formed Unicode, JSON-like
scalars only).
"""

from __future__ import annotations

from typing import Any

import duckdb

from ...errors import InvalidInput, SqlFailed, SqlRefused

EXEC_TYPES = frozenset(
    {
        "SELECT",
        "INSERT",
        "UPDATE",
        "DELETE",
        "CREATE",
        "DROP",
        "ALTER",
        "EXPLAIN",
        "MERGE_INTO",
        "ANALYZE",
        "CREATE_FUNC",
    }
)
QUERY_TYPES = frozenset({"SELECT", "EXPLAIN"})
# Every other type DuckDB names, refused by name: a new DuckDB type fails the coverage test until
# someone classifies it, and meanwhile it is refused (it is in neither set).
REFUSED_TYPES = frozenset(
    {
        "INVALID",
        "PREPARE",
        "EXECUTE",
        "TRANSACTION",
        "COPY",
        "VARIABLE_SET",
        "EXPORT",
        "PRAGMA",
        "VACUUM",
        "CALL",
        "SET",
        "LOAD",
        "RELATION",
        "EXTENSION",
        "LOGICAL_PLAN",
        "ATTACH",
        "DETACH",
        "MULTI",
        "COPY_DATABASE",
    }
)
UNKNOWN_TYPE = "UNKNOWN"  # the binding cannot name it (e.g. UPDATE EXTENSIONS in duckdb 1.x)

# Names refused wherever they appear as an identifier (quoted or not, any case). They reveal the
# host (home, secret, temp and extension directories, database files, logs) or act on the process.
DENIED_NAMES = frozenset(
    {
        "current_setting",
        "getenv",
        "getvariable",
        "which_secret",
        "pg_settings",
        "enable_logging",
        "disable_logging",
        "truncate_duckdb_logs",
        "write_log",
        "enable_profiling",
        "disable_profiling",
        "json_execute_serialized_sql",
        "arrow_scan",
        "arrow_scan_dumb",
        "python_arrow_scan",
        "pandas_scan",
        "python_map_function",
        "register_external_resource",
        "register_external_resource_type",
        "create_external_resource",
        "destroy_external_resource",
        "deregister_external_resource",
        "add_grammar_extension",
        "remove_grammar_extension",
        "add_parquet_key",
    }
)
# Generic words (a column may well be called "query"): refused only when called, name(...).
DENIED_CALLS = frozenset({"query", "query_table"})
# duckdb_* and pragma_* are the engine's own catalog: only the table-describing ones pass, so a
# function a later DuckDB adds under these prefixes is refused until someone reviews it.
ALLOWED_CATALOG = frozenset(
    {
        "duckdb_tables",
        "duckdb_columns",
        "duckdb_views",
        "duckdb_indexes",
        "duckdb_constraints",
        "duckdb_schemas",
        "duckdb_types",
        "duckdb_sequences",
        "duckdb_functions",
        "duckdb_keywords",
        "duckdb_dependencies",
    }
)
CATALOG_PREFIXES = ("duckdb_", "pragma_")
_NAME_TOKENS = frozenset({"identifier", "keyword"})


def statement_type(statement: str) -> str:
    """The one statement's type name; InvalidInput or SqlFailed for text that is not one statement."""
    try:
        parsed = duckdb.extract_statements(statement)
    except duckdb.Error as exc:
        raise SqlFailed(f"the statement does not parse: {str(exc).splitlines()[0]}") from None
    if len(parsed) != 1:
        raise InvalidInput(f"one statement per call; got {len(parsed)}", field="statement")
    try:
        return parsed[0].type.name
    except ValueError:  # a type the Python binding has no member for: never guess, refuse
        return UNKNOWN_TYPE


def check_type(kind: str, *, query_only: bool) -> None:
    allowed = QUERY_TYPES if query_only else EXEC_TYPES
    if kind in allowed:
        return
    if query_only and kind in EXEC_TYPES:
        what = "sql_query reads only (SELECT, EXPLAIN)"
    else:
        what = (
            "SQL memory allows tables and queries only (no ATTACH, COPY, LOAD, INSTALL, SET, PRAGMA, "
            "EXPORT, CALL, transaction control or statements it cannot classify)"
        )
    raise SqlRefused(f"{kind} statements are refused: {what}", statement_type=kind)


def _name(text: str) -> str:
    if len(text) >= 2 and text[0] == '"' and text[-1] == '"':
        text = text[1:-1].replace('""', '"')
    return text.lower()  # DuckDB matches names case-insensitively, quoted or not


def check_names(statement: str, kind: str) -> None:
    """Refuse the statement if it names a denied function, view or catalog entry."""
    try:
        tokens = duckdb.tokenize(statement)
    except duckdb.Error as exc:  # pragma: no cover - extract_statements parsed it a moment ago
        raise SqlFailed(f"the statement does not parse: {str(exc).splitlines()[0]}") from None
    # Comments are their own tokens and string literals are not names: neither hides nor trips one.
    spans = [
        (start, tokens[i + 1][0] if i + 1 < len(tokens) else len(statement), t.name)
        for i, (start, t) in enumerate(tokens)
    ]
    significant = [(statement[a:b].strip(), kind_) for a, b, kind_ in spans if kind_ != "comment"]
    for i, (text, token_kind) in enumerate(significant):
        if token_kind not in _NAME_TOKENS:
            continue
        name = _name(text)
        called = i + 1 < len(significant) and significant[i + 1][0] == "("
        if (
            name in DENIED_NAMES
            or (called and name in DENIED_CALLS)
            or (name.startswith(CATALOG_PREFIXES) and name not in ALLOWED_CATALOG)
        ):
            raise SqlRefused(
                f"{name} is refused: SQL memory does not expose the engine's settings, files, logs or "
                "secrets, nor run SQL built from strings",
                statement_type=kind,
                name=name,
            )


def check_text(value: str, field: str) -> str:
    """An exact ``str`` that encodes as UTF-8 (a lone surrogate is a typed refusal, not a crash)."""
    text = str.__str__(value)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{field} is not valid Unicode text (it holds a lone surrogate)", field=field) from None
    return text


_SCALARS = (type(None), bool, int, float, str)


def check_params(params: Any) -> list[Any] | dict[str, Any] | None:
    """Parameters are a list/tuple, or a dict keyed by str, of JSON-like scalars; a copy comes back."""
    if params is None:
        return None
    if isinstance(params, (list, tuple)):
        return [_scalar(v, f"params[{i}]") for i, v in enumerate(params)]
    if isinstance(params, dict):
        out: dict[str, Any] = {}
        for key, value in params.items():
            if type(key) is not str or not key:
                raise InvalidInput("named params need non-empty str keys", field="params")
            out[check_text(key, "params")] = _scalar(value, f"params[{key!r}]")
        return out
    raise InvalidInput(
        f"params must be a list, a tuple or a dict of name -> value; got {type(params).__name__}", field="params"
    )


def _scalar(value: Any, field: str) -> Any:
    if type(value) not in _SCALARS:  # exact types: no subclass carries its own behaviour to the engine
        raise InvalidInput(
            f"{field} must be null, a boolean, a number or a string; got {type(value).__name__}", field="params"
        )
    return check_text(value, field) if type(value) is str else value


def checked(statement: Any, params: Any, *, query_only: bool) -> tuple[str, str, Any]:
    """Every check, in order; returns (statement, type name, params) ready for the engine."""
    if not isinstance(statement, str) or not statement.strip():
        raise InvalidInput("statement must be a non-empty SQL string", field="statement")
    text = check_text(statement, "statement")
    clean_params = check_params(params)
    kind = statement_type(text)
    check_type(kind, query_only=query_only)
    check_names(text, kind)
    return text, kind, clean_params


__all__ = [
    "EXEC_TYPES",
    "QUERY_TYPES",
    "REFUSED_TYPES",
    "UNKNOWN_TYPE",
    "check_params",
    "check_type",
    "checked",
    "statement_type",
]
