"""The home's own verbs: audit verify, the retrieval index, and SQL memory (sql-exec, sql-query).
Through a memory service (``--url``, an admin key) audit and index run on the service's home."""

from __future__ import annotations

from .io import counts_line, json_option
from .registry import EXIT_ERROR, Call, Output, arg, verb


@verb(
    "audit",
    "check the hash-chained audit log",
    arg("action", choices=["verify"]),
    scope=False,
    identity=False,
    remote=True,
)
def audit(call: Call) -> Output:
    report = (call.remote or call.memory).verify_audit()
    text = f"audit chain ok ({report.rows} rows)" if report.ok else f"audit chain BROKEN: {report.problem}"
    where = {"url": call.remote.url} if call.remote else {"home": str(call.home)}
    return {"audit": report.to_dict(), **where}, text, 0 if report.ok else EXIT_ERROR


@verb(
    "index",
    "the retrieval index: status, optimize, repair, rebuild",
    arg("action", choices=["status", "optimize", "repair", "rebuild"]),
    scope=False,
    identity=False,
    remote=True,
)
def index(call: Call) -> Output:
    action, remote = call.args.action, call.remote
    if remote is not None:
        if action == "rebuild":
            doc = {"action": action, "rows": remote.reindex()}
        elif action == "repair":
            doc = {"action": action, "repaired": remote.repair_projections()}
        elif action == "optimize":
            doc = {"action": action, **remote.optimize_index()}
        else:  # the service adds its queued index writes: not part of what a home answers here
            doc = {"action": action, **{k: v for k, v in remote.index_status().items() if k != "queued"}}
        return doc, counts_line(doc), 0
    memory = call.memory
    projector = memory.projector
    if action == "rebuild":
        doc = {"action": action, "rows": memory.reindex()}
    elif action == "repair":
        doc = {"action": action, "repaired": memory.repair_projections()}
    elif action == "optimize":
        doc = {"action": action, **projector.optimize()}
    else:
        doc = {"action": action, **projector.status()}
    return doc, counts_line(doc), 0


def _sql(call: Call, op: str) -> Output:
    args = call.args
    result = getattr(call.tool, op)(args.statement, json_option(args.params, "params"), scope=args.scope)
    if result.columns:
        lines = [" | ".join(result.columns)] + [" | ".join(map(str, r)) for r in result.rows]
    else:
        lines = [f"{result.statement_type}: done"]
    if result.truncated:
        lines.append(f"(cut to the first {len(result.rows)} rows)")
    return result.to_dict(), "\n".join(lines), 0


_SQL = (arg("statement"), arg("--params", help="a JSON list (for ?) or object (for $name) of parameters"))


@verb("sql-exec", "run one statement on the scope's SQL memory (tables, inserts, queries)", *_SQL, writes=True)
def sql_exec(call: Call) -> Output:
    return _sql(call, "sql_exec")


@verb("sql-query", "run one read-only statement (SELECT, EXPLAIN) on the scope's SQL memory", *_SQL)
def sql_query(call: Call) -> Output:
    return _sql(call, "sql_query")
