"""Erasure on a PostgreSQL authority: a user's or a tenant's rows go, in every table, while the
rows of another user, and of the same user name in another tenant, stay byte for byte; the
chain still verifies; the text census finds nothing; the event stream never numbers an event
twice after its newest events were erased; a hold queued by one replica is read by another
(whose writes it refuses); and the rewrite is ``VACUUM FULL`` of the tables the erasure changed."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import FixedClock, Identity, Memory
from memory_core.adapters.postgres.connection import PgConnection
from memory_core.adapters.postgres.erasure import PgErasure
from memory_core.adapters.postgres.home import PgHome
from memory_core.erasure import ErasureRequest, ErasureStatus, ErasureTarget
from memory_core.errors import InternalError
from memory_core.identity import Namespace, Scope
from memory_core.substrate.decisions import Interaction
from memory_core.substrate.lenses import parse_lens
from tests.conftest import T0
from tests.postgres.conftest import connect
from tests.postgres.log_kit import batch, log, version
from tests.postgres.substrate_kit import Ports, change, decision, entry, frame, hook, ports, write

GATE = '"the gate code is 7731"'  # acme/ana's and globex/ana's alike: shared, so not looked for


def _populate(p: Ports, key_dir: Path) -> None:
    """Rows of three namespaces in every kind of table: acme/ana, acme/bob and globex/ana."""
    versions = log(p.db, key_dir)
    for tenant in ("globex", "acme"):
        p.webhooks.put(hook(tenant, f"h-{tenant}"), entry(tenant, key="webhook", op="webhook"))
        lens = parse_lens(tenant, "ops", {"title": f"{tenant} ops"}, None, version=1, defined_at=T0, defined_by="a")
        write(p, [], [lens], tenant=tenant)
    for n, (tenant, owner) in enumerate([("globex", "ana"), ("acme", "bob"), ("acme", "ana")]):
        ns = Namespace(tenant, Scope.USER, owner)
        rows = [
            version(f"{tenant}-{owner}-1", key="gate", ns=ns, i=3 * n, value_json=GATE),
            version(
                f"{tenant}-{owner}-2", key="pet", ns=ns, i=3 * n + 1, value_json=f'"{owner} of {tenant} has a cat"'
            ),
        ]
        versions.apply(batch(rows, "gate", ns))
        fid = f"fr-{tenant}-{owner}"
        events = [change(f"e-{tenant}-{owner}-{i}", tenant=tenant, owner=owner, frame_id=fid) for i in range(2)]
        records = [frame(fid, tenant=tenant, owner=owner), decision(f"d-{tenant}-{owner}", tenant=tenant, owner=owner)]
        write(p, events, records, tenant=tenant, owner=owner)
        said = Interaction(
            f"i-{tenant}-{owner}", tenant, f"user:{owner}", "render", (), fid, f"{owner}'s pet?", (), None, None, T0
        )
        p.substrate.record_answer(said, None)


def _snapshot(db: PgConnection, tenant: str, owner: str | None = None) -> dict[str, str]:
    """Every row of the tenant (of one owner or consumer of it) of every table with a tenant
    column, as text."""
    where = f"r.tenant = '{tenant}'"
    if owner is not None:
        row = "to_jsonb(r)"
        where += f" AND ({row} ->> 'owner_id' = '{owner}' OR {row} ->> 'consumer' = 'user:{owner}')"
    tables = [
        r[0]
        for r in db.rows(
            "SELECT table_name FROM information_schema.columns WHERE table_schema = ? AND column_name = 'tenant' "
            "AND table_name IN (SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE') "
            "ORDER BY 1",
            [db.schema],
        )
    ]
    out = {}
    for t in tables:
        found = db.rows(f"SELECT r::text FROM {t} r WHERE {where} ORDER BY 1")
        out[t] = "\n".join(r[0] for r in found)
    return out


def _erase(p: Ports, target: ErasureTarget) -> tuple[list[str], set[str]]:
    """The saga's store steps, in its order; answers the needles and those shared."""
    texts, _ = p.erasure.collect(target)
    needles = sorted({t for t in texts if t})
    shared = p.erasure.shared(target, needles)
    p.erasure.erase_rows(target, entry(target.tenant, key="erasure:r1", op="erase"))
    p.erasure.scrub_audit_keys(target)
    with p.db.lock:  # as the saga runs it: under the store's lock, outside a transaction
        p.erasure.rewrite()
    return needles, shared


def test_erasing_a_user_then_a_tenant_leaves_every_other_row_intact(pg_url: str, tmp_path: Path) -> None:
    a, b = ports(connect(pg_url), tmp_path / "keys"), ports(connect(pg_url), tmp_path / "keys")
    try:
        _populate(a, tmp_path / "keys")
        globex = _snapshot(a.db, "globex")
        bob = _snapshot(a.db, "acme", "bob")
        assert sum(len(v) > 0 for v in globex.values()) >= 10  # rows in most kinds of table

        user = ErasureTarget.of("acme", user="ana")
        assert b.erasure.census_rows(user)["memory_versions"] == 2
        needles, shared = _erase(b, user)  # the other replica runs it
        assert GATE in shared and '"ana of acme has a cat"' in needles and '"ana of acme has a cat"' not in shared
        assert set(a.erasure.census_rows(user).values()) == {0}
        assert set(a.erasure.census_text([n for n in needles if n not in shared]).values()) == {0}
        assert a.erasure.census_text(['"ana of globex has a cat"'])["memory_versions"] == 1
        assert _snapshot(a.db, "globex") == globex
        assert _snapshot(a.db, "acme", "bob") == bob
        assert [ns for ns in a.erasure.namespaces("acme") if ns[0] == "user"] == [("user", "bob")]
        assert a.audit.verify().ok

        tenant = ErasureTarget.of("acme")
        needles, shared = _erase(a, tenant)
        assert set(b.erasure.census_rows(tenant).values()) == {0}
        assert set(b.erasure.census_text([n for n in needles if n not in shared]).values()) == {0}
        left = _snapshot(a.db, "acme")
        assert left.pop("audit_log") and left == {t: "" for t in globex if t != "audit_log"}
        keys = a.db.rows("SELECT DISTINCT key FROM audit_log WHERE tenant = 'acme'")
        assert all(k.startswith("erased:") for (k,) in keys)  # the chain's rows stay, hash-only
        assert _snapshot(b.db, "globex") == globex
        assert b.substrate.lenses("globex") and b.webhooks.outbox("h-globex")
        assert b.audit.verify().ok
    finally:
        a.db.close()
        b.db.close()


def test_an_event_is_never_numbered_twice_after_the_newest_were_erased(pg_db: PgConnection, tmp_path: Path) -> None:
    p = ports(pg_db, tmp_path / "keys")
    write(p, [change("g1", tenant="globex")], tenant="globex")
    write(p, [change("a1"), change("a2")])
    p.erasure.erase_rows(ErasureTarget.of("acme", user="ana"), entry(key="erasure:r1", op="erase"))
    assert pg_db.one("SELECT max(seq) FROM state_changes") == 1 and p.substrate.last_event_seq() == 3
    write(p, [change("g2", tenant="globex")], tenant="globex")  # a reader at seq 3 must see it
    found = p.substrate.events([Namespace("globex", Scope.USER, "ana")], 0, 10)
    assert [(e.event_id, e.seq) for e in found] == [("g1", 1), ("g2", 4)]
    assert p.audit.verify().ok


def test_a_hold_queued_by_one_replica_is_seen_by_another(pg_url: str, tmp_path: Path) -> None:
    a, b = PgErasure(connect(pg_url), None), PgErasure(connect(pg_url), None)  # type: ignore[arg-type]
    try:
        target = ErasureTarget.of("acme", user="ana")
        queued = ErasureRequest("r1", 1, target, ErasureStatus.QUEUED, (), 0, "admin", T0, T0)
        assert b.holds() == ()
        a.save(queued)
        assert b.holds() == (target,) and b.requests() == [queued] and b.requests("nope") == []
        done = ErasureRequest("r1", 2, target, ErasureStatus.VERIFIED, ("collect",), 1, "admin", T0, T0, 0, {"x": 0})
        a.save(done)
        assert b.holds() == () and b.requests("r1") == [done] and b.versions("r1") == [queued, done]
    finally:
        a._db.close()
        b._db.close()


def test_the_rewrite_is_vacuum_full_of_the_tables_the_erasure_changed(pg_db: PgConnection, tmp_path: Path) -> None:
    p = ports(pg_db, tmp_path / "keys")
    _populate(p, tmp_path / "keys")

    def files() -> dict[str, int]:
        tables = ("memory_versions", "state_changes", "audit_log", "ontologies", "webhooks")
        return {t: pg_db.one(f"SELECT relfilenode FROM pg_class WHERE oid = '{t}'::regclass") for t in tables}

    target = ErasureTarget.of("acme", user="ana")
    p.erasure.erase_rows(target, entry(key="erasure:r1", op="erase"))
    p.erasure.scrub_audit_keys(target)
    before = files()
    with pg_db.tx(), pytest.raises(InternalError):
        p.erasure.rewrite()
    p.erasure.rewrite()
    after = files()
    changed = {t for t in before if before[t] != after[t]}
    assert changed == {"memory_versions", "state_changes", "audit_log"}  # not the untouched tables
    PgErasure(pg_db, p.audit).rewrite()  # a saga resumed in another process: every table
    assert all(files()[t] != after[t] for t in after)
    assert p.audit.verify().ok


def test_an_erasure_through_the_memory_api_keeps_the_other_tenant(pg_url: str, tmp_path: Path) -> None:
    memory = Memory(PgHome.open(pg_url, tmp_path / "home"), FixedClock(T0))
    try:
        memory.webhook_register("acme", "http://127.0.0.1:9/hook", secret="s" * 32)
        for tenant in ("acme", "globex"):
            memory.for_run(Identity(tenant=tenant, user="ana")).set("gate", "the gate code is 7731")
        request = memory.erase("acme", user="ana")
        assert request.status is ErasureStatus.VERIFIED and request.residue_count == 0
        assert memory.for_run(Identity(tenant="acme", user="ana")).get("gate") is None
        kept = memory.for_run(Identity(tenant="globex", user="ana")).get("gate")
        assert kept is not None and kept.value == "the gate code is 7731"
        assert [e.event_type for e in memory.store.webhooks.outbox()] == ["memory.erased"]
        assert memory.store.versions.verify_audit().ok
    finally:
        memory.close()
