"""The service's admin reads (what notebooks and sensors look at) and a reviewer's work on one
namespace, through ``RemoteMemory``: the same answers as the ports' named reads on the home,
admin keys only."""

import pytest

from memory_core import FixedClock, Identity, Memory, Namespace, Scope
from memory_core.client import RemoteMemory
from memory_core.errors import AdminRequired, InvalidInput
from memory_core.service import ThreadedServer
from tests.conftest import T0
from tests.review_home import fill_review_home

ANA = Namespace("acme", Scope.USER, "ana")
TALK = [{"role": "user", "name": "Ana", "content": "I live in Lisbon."}]


@pytest.fixture
def served(tmp_path):
    """(the open home, an admin's RemoteMemory, a tenant key's RemoteMemory)."""
    clock = FixedClock(T0)
    with Memory.open(tmp_path / "home", clock=clock, embedder="hashing") as memory:
        tool = fill_review_home(memory, clock)
        tool.enqueue_extraction(TALK, session="s1")
        memory.for_run(Identity(tenant="globex", user="bo")).set("k", "v")
        admin, _ = memory.keys.create(tenant="ops", user="reviewer", admin=True)
        tenant, _ = memory.keys.create(tenant="acme", user="ana")
        with ThreadedServer(memory) as server:
            with RemoteMemory(server.url, admin) as remote, RemoteMemory(server.url, tenant) as plain:
                yield memory, remote, plain


def test_the_reads_answer_what_the_ports_answer_on_the_home(served):
    memory, remote, _ = served
    store = memory.store
    assert remote.catalog() == store.inspection.catalog()
    assert ("acme", "user", "ana", "city") in remote.catalog()
    assert remote.tenants() == store.inspection.tenants() == ["acme", "globex"]
    history = remote.history(ANA, "city")
    assert history == store.versions.history(ANA, "city")
    assert [v.value for v in history][-1] == "Paris"
    assert remote.history(ANA, "no-such-key") == []
    assert remote.resolver_records(ANA) == store.ledger.resolver_records(ANA)
    assert remote.resolver_records() == store.ledger.resolver_records() and remote.resolver_records()
    assert remote.conflicted_namespaces() == store.versions.conflicted_namespaces() == [("acme", "user", "ana")]
    cursor, backlog = remote.queue_state()
    assert cursor == store.queue.queue_cursor() and backlog == store.queue.queue_backlog() == {"extract:pending": 1}


def test_a_reviewer_decides_through_the_service_as_the_admin_key(served):
    memory, remote, _ = served
    items = remote.review_queue(ANA)
    assert [i.key for i in items] == ["office", "office-now"]
    decision = remote.resolve_conflict(ANA, "office-now", "office", "retire_peer")
    assert decision.decision == "retire_peer" and decision.rows_written > 0
    assert remote.review_queue(ANA) == [] and remote.conflicted_namespaces() == []
    assert remote.restore(ANA, "office").verdict == "restored"
    ana = memory.for_run(Identity(tenant="acme", user="ana"))
    assert ana.get("office").value.startswith("Ana's office is on the third floor")
    assert memory.verify_audit().ok


@pytest.mark.parametrize(
    "call",
    [
        lambda r: r.catalog(),
        lambda r: r.tenants(),
        lambda r: r.history(ANA, "city"),
        lambda r: r.resolver_records(),
        lambda r: r.conflicted_namespaces(),
        lambda r: r.queue_state(),
        lambda r: r.review_queue(ANA),
        lambda r: r.resolve_conflict(ANA, "office-now", "office", "clear"),
        lambda r: r.restore(ANA, "office"),
    ],
)
def test_a_tenant_key_is_refused(served, call):
    _, _, plain = served
    with pytest.raises(AdminRequired):
        call(plain)


def test_a_malformed_namespace_or_argument_is_invalid_input(served):
    _, remote, _ = served
    for body in (
        {"tenant": "acme", "scope": "nowhere", "owner_id": "ana", "key": "city"},
        {"tenant": "", "scope": "user", "owner_id": "ana", "key": "city"},
        {"tenant": "acme", "scope": "user", "owner_id": "ana"},
        {"tenant": "acme", "scope": "user", "owner_id": "ana", "key": "city", "extra": 1},
    ):
        with pytest.raises(InvalidInput):
            remote.call("/v1/admin/history", body)
    with pytest.raises(InvalidInput):
        remote.history("acme/user/ana", "city")
