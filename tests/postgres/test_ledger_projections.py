"""The resolver ledger, the index bookkeeping, tenant settings and API keys over a PostgreSQL
authority: the DuckDB adapter's behaviour, and what replicas sharing one database need (counters
that add up under concurrency, a watermark per replica's index, a key revoked once)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime, timedelta, timezone

from memory_core.access import ApiKey
from memory_core.adapters.home_key import HomeKey
from memory_core.adapters.postgres.api_keys import PgApiKeys
from memory_core.adapters.postgres.audit_chain import PgAuditChain
from memory_core.adapters.postgres.ledger import PgLedger
from memory_core.adapters.postgres.projections import PgProjections
from memory_core.adapters.postgres.settings import PgSettings
from memory_core.audit import AuditEntry
from memory_core.identity import Namespace, Scope
from memory_core.model import FactVersion, Kind, Op, Provenance, Status

from .conftest import connect

T0 = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
NS = Namespace("acme", Scope.USER, "ana")
BOB = Namespace("acme", Scope.USER, "bob")
DAY = date(2026, 3, 1)


def entry(op: str) -> AuditEntry:
    return AuditEntry(T0, "acme", "tenant", "", "k", op, "", None, "test")


def both(pg_url: str, run, n: int = 8) -> list:
    """Run ``run(db, i)`` on ``n`` threads spread over two connections, started together."""
    dbs = [connect(pg_url), connect(pg_url)]
    start = threading.Barrier(n)

    def go(i: int):
        start.wait()
        return run(dbs[i % 2], i)

    try:
        with ThreadPoolExecutor(n) as pool:
            return list(pool.map(go, range(n)))
    finally:
        for db in dbs:
            db.close()


# -- the resolver ledger --------------------------------------------------------------------------


def marks(seqs, ns: Namespace = NS) -> list[tuple]:
    return [(f"f{s}", ns, f"k{s}", "sha", s, "owed" if s % 2 else "none", "why") for s in seqs]


def test_marks_watermark_turns_pauses_and_records(pg_db):
    ledger = PgLedger(pg_db)
    assert ledger.resolver_watermark() == 0
    ledger.put_marks(marks([1, 3, 4]) + marks([5, 7], BOB), 7, T0)
    assert ledger.resolver_watermark() == 7 and ledger.mark_counts() == {"owed": 4, "none": 1}
    # In turns across namespaces, each one's newest first.
    assert [m.fact_id for m in ledger.owed_marks(10)] == ["f3", "f7", "f1", "f5"]
    assert [m.fact_id for m in ledger.owed_marks(10, skip_tenants=["acme"])] == []
    ledger.pause_namespace(BOB, T0 + timedelta(hours=1), "refused", T0)
    ledger.pause_namespace(BOB, T0 + timedelta(hours=2), "refused again", T0)  # one pause row, moved
    assert ledger.paused_namespaces(T0 + timedelta(minutes=90)) == [BOB]
    assert [m.fact_id for m in ledger.owed_marks(10, paused_at=T0)] == ["f3", "f1"]
    ledger.stamp("f3", "judged", T0, attempt=True)
    ledger.count_attempt("f1")
    assert {m.fact_id: m.attempts for m in ledger.owed_marks(10)} == {"f1": 1, "f7": 0, "f5": 0}
    assert ledger.drop_stale(T0 + timedelta(seconds=1), T0, "stale: ", skip_tenants=["other"]) == 3
    assert ledger.mark_counts() == {"judged": 1, "none": 1, "dropped": 3}
    ledger.set_resolver_stop("budget")
    assert ledger.resolver_stop() == "budget"
    record = dict(record_id="r1", tenant="acme", scope="user", owner_id="ana", action="retire", judged_fact="f3")
    record |= dict(peer_fact="f1", peer_key="k1", verdict="conflict", confidence=0.9, judge="rules")
    ledger.record_resolution(record | {"recorded_at": T0, "reason": None})
    [stored] = ledger.resolver_records(NS)
    assert stored["confidence"] == 0.9 and stored["recorded_at"] == T0 and ledger.resolver_records(BOB) == []


def test_two_passes_marking_at_once_mark_each_statement_once(pg_url, pg_db):
    both(pg_url, lambda db, i: PgLedger(db).put_marks(marks(range(1, 41)), 40, T0), n=4)
    ledger = PgLedger(pg_db)
    assert ledger.resolver_watermark() == 40 and sum(ledger.mark_counts().values()) == 40
    ledger.put_marks(marks([41]), 41, T0)
    ledger.put_marks(marks([30, 42]), 42, T0)  # a pass that read an old watermark adds the new only
    assert sum(ledger.mark_counts().values()) == 42 and ledger.resolver_watermark() == 42


def test_spend_adds_up_under_concurrency(pg_url, pg_db):
    def spend(db, i):
        ledger = PgLedger(db)
        for _ in range(25):
            ledger.add_spend(NS, DAY, "resolver" if i % 4 else "extraction", 0.5)

    both(pg_url, spend)
    ledger = PgLedger(pg_db)
    assert ledger.spend(NS, DAY) == 100.0 and ledger.spend(NS, DAY, "extraction") == 25.0
    assert ledger.spend(BOB, DAY) == 0.0 and ledger.spend(NS, date(2026, 3, 2)) == 0.0
    rows = pg_db.rows("SELECT purpose, calls FROM llm_spend ORDER BY purpose")
    assert rows == [("extraction", 50), ("resolver", 150)]


def test_erasure_flags(pg_db):
    ledger = PgLedger(pg_db)
    ledger.set_erasure("acme", "queued", T0)
    ledger.set_erasure("globex", "done", T0)
    assert ledger.erasure_under_way("acme") and not ledger.erasure_under_way("globex")
    assert ledger.tenants_under_erasure() == ["acme"]
    ledger.set_erasure("acme", "done", T0 + timedelta(hours=1))
    assert ledger.tenants_under_erasure() == [] and pg_db.one("SELECT count(*) FROM erasures") == 2


# -- the index's bookkeeping, per replica ---------------------------------------------------------


def state(fact_id: str, ns: Namespace = NS) -> FactVersion:
    return FactVersion(
        f"v-{fact_id}",
        fact_id,
        ns.tenant,
        ns.scope,
        ns.owner_id,
        f"k-{fact_id}",
        '"x"',
        "sha",
        Kind.FACT,
        "general",
        Status.ACTIVE,
        Op.SET,
        1,
        "c1",
        None,
        T0,
        None,
        T0,
        None,
        0,
        Provenance("acme", "user:ana", "test"),
        "user:ana",
    )


def test_each_replica_has_its_own_watermark_and_failures(pg_db, pg_url):
    other = connect(pg_url)
    try:
        a, b = PgProjections(pg_db, "replica-a"), PgProjections(other, "replica-b")
        assert a.index_watermark() == b.index_watermark() == 0
        a.set_index_watermark(17)
        b.set_index_watermark(5)
        assert (a.index_watermark(), b.index_watermark()) == (17, 5)
        assert PgProjections(other, "replica-a").index_watermark() == 17  # the same replica, restarted
        a.record_projection_failure([state("f1"), state("f2", BOB)], "lance down", T0)
        a.record_projection_failure([state("f1")], "lance down again", T0 + timedelta(minutes=1))
        assert a.pending_projection_failures() == ["f1", "f2"] and a.pending_projection_failures(BOB) == ["f2"]
        assert a.failure_attempts() == {"f1": (2, T0 + timedelta(minutes=1)), "f2": (1, T0)}
        # Replica b's index took those writes: it has nothing to repair and cannot resolve a's.
        assert b.pending_projection_failures() == [] and b.failure_attempts() == {}
        b.resolve_projection_failures(["f1", "f2"], T0)
        assert a.pending_projection_failures() == ["f1", "f2"]
        a.resolve_projection_failures(["f1"], T0)
        assert a.pending_projection_failures() == ["f2"] and a.pending_projection_failures(NS) == []
        a.record_projection_failure([], "nothing", T0)
    finally:
        other.close()


# -- tenant settings and API keys (audited) -------------------------------------------------------


def test_settings_are_audited_and_ontologies_versioned(pg_db, tmp_path):
    chain = PgAuditChain(pg_db, HomeKey.create(tmp_path))
    settings = PgSettings(pg_db, chain)
    settings.put_write_config("acme", "", {"policy": "append_only"}, T0, entry("config"))
    settings.put_write_config("acme", "", {"policy": "resolve"}, T0, entry("config"))
    assert settings.write_configs("acme") == {"": {"policy": "resolve"}} and settings.write_configs("x") == {}
    assert settings.ontology("acme") is None
    assert settings.put_ontology("acme", "# v1", "s1", T0, "admin", entry("ontology")) == 1
    assert settings.put_ontology("acme", "# v2", "s2", T0, "admin", entry("ontology")) == 2
    assert settings.ontology("acme") == (2, "# v2")
    assert chain.verify().ok and chain.head[0] == 4


def api_key(key_id: str, tenant: str = "acme") -> ApiKey:
    return ApiKey(
        key_id, "f" * 64, tenant, "ana", None, frozenset({Scope.USER}), label="cli", created_at=T0, created_by="admin"
    )


def test_api_keys_add_find_list_revoke(pg_db, tmp_path):
    keys = PgApiKeys(pg_db, PgAuditChain(pg_db, HomeKey.create(tmp_path)))
    keys.add(api_key("k1"), entry("key"))
    keys.add(api_key("k2", "globex"), entry("key"))
    assert keys.find("k1") == api_key("k1") and keys.find("nope") is None
    assert [k.key_id for k in keys.list()] == ["k1", "k2"] and [k.key_id for k in keys.list("globex")] == ["k2"]
    assert keys.revoke("k1", T0 + timedelta(days=1), entry("revoke"))
    assert keys.find("k1").revoked_at == T0 + timedelta(days=1)
    assert not keys.revoke("k1", T0 + timedelta(days=2), entry("revoke")) and not keys.revoke("x", T0, entry("r"))
    assert keys.find("k1").revoked_at == T0 + timedelta(days=1)


def test_two_replicas_revoking_one_key_revoke_it_once(pg_url, pg_db, tmp_path):
    key = HomeKey.create(tmp_path)
    PgApiKeys(pg_db, PgAuditChain(pg_db, key)).add(api_key("k1"), entry("key"))

    def revoke(db, i):
        return PgApiKeys(db, PgAuditChain(db, key)).revoke("k1", T0 + timedelta(seconds=i), entry("revoke"))

    assert sorted(both(pg_url, revoke, n=6)) == [False] * 5 + [True]
    assert pg_db.one("SELECT count(*) FROM audit_log WHERE op = 'revoke'") == 1  # the losers wrote nothing
    assert PgAuditChain(pg_db, key).verify().ok
