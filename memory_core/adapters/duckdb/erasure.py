"""``ErasureStore`` over the home's DuckDB file: the saga's request rows, and the statements each
of its steps runs (collect, delete in scope, scrub the chain's keys, count what is left, rewrite
the file). The rules for which rows a target covers are in ``erasure_rules``."""

from __future__ import annotations

import json
from typing import Any, Callable, Sequence

from ...audit import ERASED_PREFIX, AuditEntry
from ...erasure import ErasureRequest, ErasureStatus, ErasureTarget
from ...erasure.model import HOLDING
from .audit_chain import COMMIT_FLOOR, AuditChain
from .audit_ledger import BOUND, SELF_BOUND
from .connection import DuckDBConnection, StoreCache
from .erasure_rules import AUDIT, ERASURE_RULES, NONE, row_key_parts, where
from .schema import utc
from .schema_erasure import REQUEST_COLUMNS

# The needles go to the engine as regular expressions of literals (RE2 builds one automaton for
# the alternation): one pass over a column per group, where ``contains`` per needle cost
# needles x rows (1,000 needles over 50,000 rows: 59 s, docs/benchmarks.md).
_GROUP_CHARS = 16_000


def _literal(needle: str) -> str:
    return r"\Q" + needle.replace(r"\E", r"\E\\E\Q") + r"\E"


def _patterns(needles: Sequence[str]) -> list[str]:
    """The needles as a few alternations of literals, each at most about ``_GROUP_CHARS`` long."""
    groups: list[list[str]] = [[]]
    size = 0
    for needle in needles:
        if groups[-1] and size + len(needle) > _GROUP_CHARS:
            groups.append([])
            size = 0
        groups[-1].append(_literal(needle))
        size += len(needle)
    return ["(?s)" + "|".join(group) for group in groups if group]


def _request(row: Sequence[Any]) -> ErasureRequest:
    r = dict(zip(REQUEST_COLUMNS, row))
    return ErasureRequest(
        request_id=r["request_id"],
        version=int(r["version"]),
        target=ErasureTarget.from_json(r["target"]),
        status=ErasureStatus(r["status"]),
        steps=tuple(json.loads(r["steps"])),
        attempts=int(r["attempts"]),
        actor=r["actor"],
        requested_at=utc(r["requested_at"]),
        updated_at=utc(r["updated_at"]),
        residue_count=r["residue_count"],
        residue=json.loads(r["residue"]) if r["residue"] else {},
        verified_at=utc(r["verified_at"]),
        error=r["error"],
    )


class DuckDBErasure:
    # This engine's SQL for what another engine's port words differently: the rows a rule
    # covers, the ledger's tables, a row key that begins with one of a list of prefixes (the one
    # parameter), and a text's SHA-256 in hex.
    _where = staticmethod(where)
    _bound = BOUND
    _prefixed = "list_bool_or([starts_with(row_key, p) FOR p IN ?::VARCHAR[]])"
    _sha = "sha256({})"

    def __init__(self, db: DuckDBConnection, audit: AuditChain, forget_caches: Callable[[], None]) -> None:
        self._db = db
        self._audit = audit
        self._forget_caches = forget_caches  # every port's in-memory copy of rows this deletes
        self._holds = StoreCache(db, self._load_holds)

    # -- the request rows ----------------------------------------------------------------------

    def save(self, request: ErasureRequest) -> None:
        """Append the request's next version (a checkpoint)."""
        r = request
        params = [
            r.request_id,
            r.version,
            r.target.tenant,
            r.target.to_json(),
            r.status.value,
            json.dumps(list(r.steps)),
            r.attempts,
            r.actor,
            r.requested_at,
            r.updated_at,
            r.residue_count,
            json.dumps(r.residue, sort_keys=True) if r.residue else None,
            r.verified_at,
            r.error,
        ]
        with self._db.tx() as con:
            con.execute(f"INSERT INTO erasure_requests VALUES ({', '.join('?' * len(params))})", params)
        self._holds.drop()

    def requests(self, request_id: str | None = None) -> list[ErasureRequest]:
        """The newest version of every request (or of one), oldest request first."""
        rows = self._db.rows(
            f"SELECT {', '.join(REQUEST_COLUMNS)} FROM erasure_requests WHERE ? IS NULL OR request_id = ? "
            "QUALIFY row_number() OVER (PARTITION BY request_id ORDER BY version DESC) = 1 "
            "ORDER BY requested_at, request_id",
            [request_id, request_id],
        )
        return [_request(r) for r in rows]

    def versions(self, request_id: str) -> list[ErasureRequest]:
        rows = self._db.rows(
            f"SELECT {', '.join(REQUEST_COLUMNS)} FROM erasure_requests WHERE request_id = ? ORDER BY version",
            [request_id],
        )
        return [_request(r) for r in rows]

    def _load_holds(self) -> tuple[ErasureTarget, ...]:
        return tuple(r.target for r in self.requests() if r.status in HOLDING)

    def holds(self) -> tuple[ErasureTarget, ...]:
        """The targets of every request still holding its scope (queued, running or failed)."""
        return self._holds.get()

    # -- the steps -----------------------------------------------------------------------------

    def collect(self, target: ErasureTarget) -> tuple[list[str], list[str]]:
        """The target's text (every content column of every row it covers) and its fact ids."""
        texts: list[str] = []
        for table, rule in ERASURE_RULES.items():
            if not rule.text or rule.how in (NONE, AUDIT):
                continue
            sql, params = self._where(rule, target)
            for row in self._db.rows(f"SELECT {', '.join(rule.text)} FROM {table} WHERE {sql}", params):
                texts.extend(v for v in row if isinstance(v, str))
        sql, params = self._where(ERASURE_RULES["memory_versions"], target)
        fact_ids = [r[0] for r in self._db.rows(f"SELECT DISTINCT fact_id FROM memory_versions WHERE {sql}", params)]
        return texts, fact_ids

    def shared(self, target: ErasureTarget, needles: Sequence[str]) -> set[str]:
        """The needles some row outside the target still holds (another user's identical text):
        finding them afterwards proves nothing, so the census does not look for them."""
        found: set[str] = set()
        left = list(needles)
        while left:  # an extraction names the leftmost match: look again for what it may hide
            new: set[str] = set()
            for table, rule in ERASURE_RULES.items():
                if not rule.text or rule.how in (NONE, AUDIT):
                    continue
                sql, params = self._where(rule, target)
                for col in rule.text:
                    for pattern in _patterns(left):
                        rows = self._db.rows(
                            f"SELECT DISTINCT unnest(regexp_extract_all({col}, ?)) FROM {table} "
                            f"WHERE NOT ({sql}) AND regexp_matches({col}, ?)",
                            [pattern, *params, pattern],
                        )
                        new.update(r[0] for r in rows)
            new &= set(left)
            if not new:
                break
            found |= new
            left = [n for n in left if n not in new]
        return found

    def erase_rows(self, target: ErasureTarget, entry: AuditEntry) -> dict[str, int]:
        """Delete every row the target covers, in one audited transaction. A deleted row's ledger
        lines stay (hash-only): the ``-`` lines this write records cancel the ``+`` lines of the
        writes that made them, so the chain still verifies."""
        counts: dict[str, int] = {}
        with self._audit.transaction([entry]) as tx:
            for table, rule in ERASURE_RULES.items():
                if rule.how in (NONE, AUDIT):
                    continue
                sql, params = self._where(rule, target)
                if table in SELF_BOUND:  # their + lines ride in the rows: keep them in the ledger
                    key = self._bound[table].key_sql
                    tx.execute(
                        f"INSERT INTO audit_digests SELECT audit_seq, '{table}', {key}, row_digest, '+' "
                        f"FROM {table} WHERE ({sql}) AND row_digest IS NOT NULL",
                        params,
                    )
                if table in BOUND:
                    tx.removed(table, sql, params)
                counts[table] = len(tx.execute(f"DELETE FROM {table} WHERE {sql} RETURNING 1", params).fetchall())
        self._holds.drop()
        self._forget_caches()
        return counts

    def _prefixes(self, target: ErasureTarget) -> list[str]:
        parts = row_key_parts(target)
        return [
            self._db.one(f"SELECT left(json_array({', '.join('?' * len(p))})::VARCHAR, -1) || ','", p) for p in parts
        ]

    def scrub_audit_keys(self, target: ErasureTarget) -> dict[str, int]:
        """Replace the keys the chain and its ledger name for the target by their commitments
        (``erased:<sha256>``): what a committed row hashed, so every row still verifies. A key
        that a row from before schema 9 also names stays (its row hashed the key itself, and the
        ledger pairs lines by key): the census reports it."""
        floor = int(self._db.meta(COMMIT_FLOOR) or 0)
        sql, params = self._where(ERASURE_RULES["audit_log"], target)
        prefixes = self._prefixes(target)
        with self._db.tx() as con:
            keys = con.execute(
                f"UPDATE audit_log SET key = '{ERASED_PREFIX}' || {self._sha.format('key')} WHERE ({sql}) AND seq >= ? "
                f"AND NOT starts_with(key, '{ERASED_PREFIX}') RETURNING 1",
                [*params, floor],
            ).fetchall()
            lines = con.execute(
                f"UPDATE audit_digests SET row_key = '{ERASED_PREFIX}' || {self._sha.format('row_key')} WHERE seq >= ? "
                f"AND {self._prefixed} "
                "AND row_key NOT IN (SELECT row_key FROM audit_digests WHERE seq < ?) RETURNING 1",
                [floor, prefixes, floor],
            ).fetchall()
        return {"audit_log": len(keys), "audit_digests": len(lines)}

    def census_rows(self, target: ErasureTarget) -> dict[str, int]:
        """Rows in scope, per table (zeros included); for the chain, rows still naming a key."""
        out: dict[str, int] = {}
        for table, rule in ERASURE_RULES.items():
            if rule.how == NONE:
                continue
            if table == "audit_digests":
                found = self._db.one(
                    f"SELECT count(*) FROM audit_digests WHERE {self._prefixed}", [self._prefixes(target)]
                )
                out[table] = int(found)
                continue
            sql, params = self._where(rule, target)
            if table == "audit_log":
                sql = f"({sql}) AND NOT starts_with(key, '{ERASED_PREFIX}')"
            elif table == "webhook_outbox":  # the saga's own announcements, appended once it verified
                sql = f"({sql}) AND event_type <> 'memory.erased'"
            out[table] = int(self._db.one(f"SELECT count(*) FROM {table} WHERE {sql}", params))
        return out

    def census_text(self, needles: Sequence[str]) -> dict[str, int]:
        """Rows of any table whose text holds one of the erased strings, per table."""
        patterns = _patterns(needles)
        out: dict[str, int] = {}
        for table, rule in ERASURE_RULES.items():
            if not rule.text:
                continue
            if not patterns:
                out[table] = 0
                continue
            found = " OR ".join(f"regexp_matches({c}, ?)" for c in rule.text for _ in patterns)
            params = [p for _ in rule.text for p in patterns]
            out[table] = int(self._db.one(f"SELECT count(*) FROM {table} WHERE {found}", params))
        return out

    def namespaces(self, tenant: str) -> list[tuple[str, str]]:
        """Every (scope, owner) of a tenant the store knows of: its rows' and its keys' owners."""
        rows = self._db.rows(
            "SELECT DISTINCT scope, owner_id FROM memory_versions WHERE tenant = ? "
            "UNION SELECT DISTINCT scope, owner_id FROM state_changes WHERE tenant = ? "
            "UNION SELECT 'user', user_id FROM api_keys WHERE tenant = ? AND user_id IS NOT NULL "
            "UNION SELECT 'agent', agent FROM api_keys WHERE tenant = ? AND agent IS NOT NULL "
            "UNION SELECT 'tenant', ?",
            [tenant] * 5,
        )
        return sorted((str(s), str(o)) for s, o in rows)

    def rewrite(self) -> None:
        """Rewrite the file from its live rows (``DuckDBConnection.rewrite``)."""
        self._db.rewrite()
