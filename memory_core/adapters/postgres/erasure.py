"""``ErasureStore`` over a PostgreSQL authority: the saga's request rows, and the statements each
of its steps runs. The rules for which rows a target covers are the DuckDB home's
(``..duckdb.erasure_rules``), their ``list_contains`` written as ``= ANY``.

What differs from a DuckDB home:
- no copy of anything is kept (another replica may queue an erasure or write the rows this
  deletes): ``holds`` reads the requests each time, and nothing is forgotten after a delete;
- the event stream's seq never goes back: before deleting events, the erasure raises the floor
  ``substrate.EVENT_SEQ_FLOOR`` to the highest seq stored, so an event written later is never
  numbered at or below a watermark a reader already passed;
- the text census (``shared``, ``census_text``) matches the needles with RE2 here, over the
  rows streamed from the server, a batch at a time: PostgreSQL's own regular expressions took
  206 s for one 16,000-character alternation of literals over 50,000 rows (on the machine this
  was written on), where streaming the rows through RE2 took about 1 s for the whole census;
- ``rewrite`` is ``VACUUM (FULL)`` of the tables the erasure changed: a deleted or updated
  row stays in its table's pages as a dead tuple until vacuumed, and ``VACUUM FULL`` writes each
  table anew from its live rows. The write-ahead log, replicas' and backups' copies keep the
  old bytes until they are recycled: that is the operator's retention, not the store's.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from typing import TYPE_CHECKING, Any, Iterator, Sequence

import psycopg
import re2

from ...audit import AuditEntry
from ...erasure import ErasureRequest, ErasureTarget
from ...erasure.model import HOLDING
from ...errors import InternalError
from ..duckdb.erasure import DuckDBErasure, _patterns, _request
from ..duckdb.erasure_rules import AUDIT, ERASURE_RULES, NONE, TableRule, row_key_parts, where
from ..duckdb.schema_erasure import REQUEST_COLUMNS
from .audit_ledger import BOUND
from .connection import PgConnection, sql
from .substrate import _NEXT_SEQ, EVENT_SEQ_FLOOR

if TYPE_CHECKING:
    from .audit_chain import PgAuditChain

_LIST_CONTAINS = re.compile(r"list_contains\(\?, ([^)]*)\)")
# Every table whose rows an erasure may delete or rewrite (a view holds none).
_ERASABLE = tuple(t for t, rule in ERASURE_RULES.items() if rule.how != NONE)
_BATCH = 2000  # rows fetched at a time while the census streams a table


def pg_where(rule: TableRule, target: ErasureTarget) -> tuple[str, list[Any]]:
    """``erasure_rules.where`` in PostgreSQL's words: ``list_contains(?, x)`` is ``x = ANY(?)``
    (the parameters stay in their order)."""
    statement, params = where(rule, target)
    return _LIST_CONTAINS.sub(r"(\1) = ANY(?)", statement), params


class _NoCopy:
    """Where the DuckDB port keeps its copy of the holds: here nothing to drop."""

    def drop(self) -> None:
        pass


class PgErasure(DuckDBErasure):
    """``ErasureStore`` over the authority's pool: the DuckDB port, with its engine's words
    swapped for PostgreSQL's (``_where``, ``_bound``, ``_prefixed``, ``_sha``, ``_prefixes``), so
    ``save``, ``versions``, ``collect``, ``census_rows`` and ``namespaces`` are its statements
    as written, and ``erase_rows`` and ``scrub_audit_keys`` run its statements too."""

    _where = staticmethod(pg_where)
    _bound = BOUND  # type: ignore[assignment]
    _prefixed = "EXISTS (SELECT 1 FROM unnest(?::text[]) AS p WHERE starts_with(row_key, p))"
    _sha = "encode(sha256(convert_to({}, 'UTF8')), 'hex')"

    def __init__(self, db: PgConnection, audit: PgAuditChain) -> None:
        self._db = db  # type: ignore[assignment]  # the same reads and transactions
        self._audit = audit  # type: ignore[assignment]
        self._forget_caches = lambda: None  # no port keeps a copy of rows
        self._holds = _NoCopy()  # type: ignore[assignment]
        # The tables this process's erasures changed since their last rewrite: a hint for
        # ``rewrite`` only (a saga resumed elsewhere rewrites every table that may hold rows).
        self._touched: set[str] = set()

    # -- the request rows ----------------------------------------------------------------------

    def requests(self, request_id: str | None = None) -> list[ErasureRequest]:
        """The newest version of every request (or of one), oldest request first."""
        rows = self._db.rows(
            f"SELECT * FROM (SELECT DISTINCT ON (request_id) {', '.join(REQUEST_COLUMNS)} FROM erasure_requests "
            "WHERE ?::text IS NULL OR request_id = ? ORDER BY request_id, version DESC) newest "
            "ORDER BY requested_at, request_id",
            [request_id, request_id],
        )
        return [_request(r) for r in rows]

    def holds(self) -> tuple[ErasureTarget, ...]:
        """The targets of every request still holding its scope (queued, running or failed), read
        from the authority: a replica's write sees a hold another replica queued."""
        rows = self._db.rows(
            "SELECT target FROM (SELECT DISTINCT ON (request_id) request_id, target, status, requested_at "
            "FROM erasure_requests ORDER BY request_id, version DESC) newest WHERE status = ANY(?) "
            "ORDER BY requested_at, request_id",
            [sorted(s.value for s in HOLDING)],
        )
        return tuple(ErasureTarget.from_json(r[0]) for r in rows)

    # -- the steps -----------------------------------------------------------------------------

    def shared(self, target: ErasureTarget, needles: Sequence[str]) -> set[str]:
        """The needles some row outside the target still holds (another user's identical text):
        finding them afterwards proves nothing, so the census does not look for them."""
        found: set[str] = set()
        left = list(needles)
        while left:  # a match names the leftmost needle: look again for what it may hide
            regexes = _compiled(left)
            new: set[str] = set()
            for table, rule in ERASURE_RULES.items():
                if not rule.text or rule.how in (NONE, AUDIT):
                    continue
                scope, params = pg_where(rule, target)
                for rows in self._batches(f"SELECT {', '.join(rule.text)} FROM {table} WHERE NOT ({scope})", params):
                    text, _ = _joined(rows)
                    new.update(m for regex in regexes for m in regex.findall(text))
            new &= set(left)
            if not new:
                break
            found |= new
            left = [n for n in left if n not in new]
        return found

    def erase_rows(self, target: ErasureTarget, entry: AuditEntry) -> dict[str, int]:
        """The DuckDB port's delete (see there), after raising the event stream's floor to its
        highest seq, under the same hold of the write lock: no event is numbered in between."""
        with self._db.lock:
            with self._db.tx() as tx:
                tx.execute(
                    f"INSERT INTO meta (name, value) SELECT ?::text, ({_NEXT_SEQ})::text "
                    "ON CONFLICT (name) DO UPDATE SET value = excluded.value",
                    [EVENT_SEQ_FLOOR, EVENT_SEQ_FLOOR],
                )
            counts = super().erase_rows(target, entry)
        self._touched.update(t for t, n in counts.items() if n)
        return counts

    def _prefixes(self, target: ErasureTarget) -> list[str]:
        """What the ledger's row keys of the target's rows begin with, rendered as the ledger
        renders a key (``json_build_array``): the array with one more, empty, element, cut
        before it."""
        return [
            self._db.one(f"SELECT left(json_build_array({', '.join(['?::text'] * len(p))}, '')::text, -3)", p)
            for p in row_key_parts(target)
        ]

    def scrub_audit_keys(self, target: ErasureTarget) -> dict[str, int]:
        """The DuckDB port's scrub (see there); the tables it updated are rewritten."""
        counts = super().scrub_audit_keys(target)
        self._touched.update(t for t, n in counts.items() if n)
        return counts

    def census_text(self, needles: Sequence[str]) -> dict[str, int]:
        """Rows of any table whose text holds one of the erased strings, per table."""
        regexes = _compiled(needles)
        out: dict[str, int] = {}
        for table, rule in ERASURE_RULES.items():
            if not rule.text:
                continue
            out[table] = 0
            if not regexes:
                continue
            for rows in self._batches(f"SELECT {', '.join(rule.text)} FROM {table}", []):
                text, starts = _joined(rows)
                found = {bisect_right(starts, m.start()) for regex in regexes for m in regex.finditer(text)}
                out[table] += len(found)
        return out

    def rewrite(self) -> None:
        """``VACUUM (FULL)`` of the tables this process's erasures changed since the last rewrite
        (every table an erasure may change, when it changed none here: a saga resumed by another
        process). It takes each table's exclusive lock in turn, and cannot run in a transaction:
        it runs on the calling thread's connection (the one the write lock pinned), which must
        have none open."""
        tables = sorted(self._touched) or list(_ERASABLE)
        with self._db.connection() as con:
            if con.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                raise InternalError("the erasure's rewrite (VACUUM FULL) cannot run inside a transaction")
            for table in tables:
                con.execute(f"VACUUM (FULL) {table}")
        self._touched.clear()

    # -- reading a whole table -------------------------------------------------------------------

    def _batches(self, statement: str, params: Sequence[Any]) -> Iterator[list[tuple[Any, ...]]]:
        """The rows of a statement, ``_BATCH`` at a time (a server-side cursor), so a census over
        a large table holds one batch in memory."""
        with self._db.tx() as tx, tx.con.cursor(name="erasure_census") as cur:
            cur.execute(sql(statement, bool(params)), list(params) if params else None)
            while rows := cur.fetchmany(_BATCH):
                yield rows


def _compiled(needles: Sequence[str]) -> list[Any]:
    """The needles as a few RE2 alternations of literals (the DuckDB port's groups)."""
    return [re2.compile(p) for p in _patterns(needles)]


def _joined(rows: Sequence[Sequence[Any]]) -> tuple[str, list[int]]:
    """A batch's text as one string, each row's values joined by NUL, which no PostgreSQL text
    holds (so no needle does, and no match spans two values), with where each row's part
    begins after the first: one RE2 pass over a batch instead of one call per value."""
    parts = ["\x00".join(v for v in row if isinstance(v, str)) for row in rows]
    starts, at = [], 0
    for part in parts[:-1]:
        at += len(part) + 1
        starts.append(at)
    return "\x00".join(parts), starts
