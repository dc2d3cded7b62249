"""`memcore` write and lifecycle verbs: each one JSON document, refusals typed and writing nothing."""

import json

from memory_core import Memory
from memory_core.write.batch import import_key
from tests.cli.test_cli import run
from tests.conftest import store_snapshot

ADMIN = ("--tenant", "acme", "--user", "ana", "--agent", "helper", "--admin")


def test_set_options_lock_pin_and_their_refusals(home):
    code, doc = run(home, "set", "dob", "1990-04-02", "--string", "--pin", "--ttl", "3600")
    assert code == 0 and doc["version"]["pinned"] and doc["version"]["expires_at"]
    code, doc = run(home, "set", "dob", "1991-01-01", "--string")
    assert code == 1 and doc["error"]["code"] == "PINNED_CONFLICT" and doc["error"]["status"] == 409
    assert run(home, "lock", "dob")[1]["verdict"] == "locked"
    code, doc = run(home, "set", "dob", "1991-01-01", "--string", "--pin")
    assert doc["error"] == {
        "code": "LOCKED",
        "status": 423,
        "message": doc["error"]["message"],
        "details": {"key": "dob"},
    }
    assert run(home, "unlock", "dob")[1]["verdict"] == "unlocked"
    sha = run(home, "get", "dob")[1]["fact"]["content_sha256"]
    code, doc = run(home, "set", "dob", "1991-01-01", "--string", "--pin", "--if-match", "0" * 64)
    assert doc["error"]["code"] == "PRECONDITION_FAILED"
    code, doc = run(home, "set", "dob", "1991-01-01", "--string", "--pin", "--if-match", sha, "--dry-run")
    assert code == 0 and doc["dry_run"] and doc["rows_written"] == 0
    assert run(home, "get", "dob")[1]["fact"]["value"] == "1990-04-02"


def test_promote_demote_reject_restore_and_delete_version(home):
    run(home, "set", "team", "platform", "--proposed")
    assert run(home, "proposal-decide", "team")[1]["version"]["status"] == "active"
    assert run(home, "demote", "team")[1]["version"]["status"] == "proposed"
    run(home, "reject", "team")
    assert not run(home, "get", "team")[1]["found"]
    assert run(home, "restore", "team")[1]["verdict"] == "restored"
    head = run(home, "get", "team")[1]["fact"]["version"]
    assert run(home, "delete-version", "team", str(head - 1))[1]["verdict"] == "version_changed"
    assert run(home, "delete-version", "team", str(head))[1]["verdict"] == "deleted"


def test_bulk_set_and_import_from_files(home, tmp_path):
    entries = tmp_path / "entries.json"
    entries.write_text(json.dumps([{"key": "a1", "value": "alpha"}, {"key": "b1", "value": "beta"}]))
    code, doc = run(home, "bulk-set", str(entries))
    assert code == 0 and doc["rows_written"] == 2 and doc["verdicts"] == {"created": 2}
    lines = tmp_path / "notes.txt"
    lines.write_text("likes espresso\nplays chess\n")
    _, doc = run(home, "import", str(lines), "--dry-run")
    assert doc["dry_run"] and doc["rows_written"] == 0
    _, doc = run(home, "import", str(lines))
    assert doc["rows_written"] == 2
    assert run(home, "get", import_key("plays chess"))[1]["fact"]["source_class"] == "imported"
    code, doc = run(home, "bulk-set", str(tmp_path / "missing.json"))
    assert code == 1 and doc["error"]["code"] == "INVALID_INPUT"


def test_snapshot_restore_rollback_redact(home, tmp_path):
    run(home, "set", "city", "Berlin")
    snap = tmp_path / "snap.json"
    assert run(home, "snapshot", "--out", str(snap))[1]["rows"] == 1
    bea = ("--tenant", "acme", "--user", "bea")
    assert run(home, "restore-snapshot", str(snap), identity=bea)[1]["verdict"] == "restored"
    assert run(home, "restore-snapshot", str(snap), identity=bea)[1]["verdict"] == "already_restored"
    assert run(home, "get", "city", identity=bea)[1]["fact"]["value"] == "Berlin"
    plan = run(home, "rollback", "--to", "2000-01-01T00:00:00Z")[1]
    assert not plan["applied"] and plan["steps"] == [{"key": "city", "action": "tombstone", "rows": 1}]
    assert run(home, "get", "city")[1]["found"]
    assert run(home, "rollback", "--to", "2000-01-01T00:00:00Z", "--apply")[1]["applied"]
    assert not run(home, "get", "city")[1]["found"]
    first = run(home, "history", "city")[1]["versions"][0]["id"]
    assert run(home, "redact", "city", first)[1]["versions_redacted"] == 2
    assert run(home, "history", "city")[1]["versions"][0]["value"] == "[redacted]"


def test_configure_is_admin_only_and_refusals_write_nothing(home):
    run(home, "set", "x", "1")
    code, doc = run(home, "configure", "policy=append_only")
    assert code == 1 and doc["error"]["code"] == "ADMIN_REQUIRED"
    code, doc = run(home, "configure", "policy=sometimes", identity=ADMIN)
    assert doc["error"]["code"] == "INVALID_INPUT"
    with Memory.open(home) as memory:
        before = store_snapshot(memory)
    code, doc = run(home, "configure", "char_limit=8", 'blacklist=["codename"]', identity=ADMIN)
    assert code == 0 and doc["char_limit"] == 8
    assert run(home, "set", "bio", "a long biography")[1]["error"]["code"] == "CHAR_LIMIT_EXCEEDED"
    assert run(home, "configure-type", "otp", "retention_days=1", identity=ADMIN)[1]["retention_days"] == 1
    with Memory.open(home) as memory:
        assert store_snapshot(memory) != before and memory.verify_audit().ok


def test_sweep_expired_needs_no_identity(home):
    run(home, "set", "otp", "1234", "--ttl", "0.000001")
    code, doc = run(home, "sweep-expired", identity=())
    assert code == 0 and doc["tombstone"] == 1


def test_sql_exec_and_query(home):
    assert run(home, "sql-exec", "CREATE TABLE meds (name VARCHAR, mg INTEGER)")[0] == 0
    run(home, "sql-exec", "INSERT INTO meds VALUES (?, ?)", "--params", '["ibuprofen", 400]')
    code, doc = run(home, "sql-query", "SELECT name, mg FROM meds")
    assert code == 0 and doc["columns"] == ["name", "mg"] and doc["rows"] == [["ibuprofen", 400]]
    code, doc = run(home, "sql-exec", "COPY meds TO '/tmp/memcore-cli-escape.csv'")
    assert code == 1 and doc["error"]["code"] == "SQL_REFUSED"
    code, doc = run(home, "sql-query", "DROP TABLE meds")
    assert doc["error"]["code"] == "SQL_REFUSED"


def test_ontology_and_placement(home, tmp_path):
    ontology = tmp_path / "ontology.md"
    ontology.write_text("## service\n- `@memory_scope` tenant\n- `owner`: who to page\n")
    code, doc = run(home, "ontology-set", str(ontology))
    assert code == 1 and doc["error"]["code"] == "ADMIN_REQUIRED"
    code, doc = run(home, "ontology-set", str(ontology), identity=ADMIN)
    assert code == 0 and doc["version"] == 1 and doc["types"]["service"]["memory_scope"] == "tenant"
    assert run(home, "ontology-get")[1]["version"] == 1
    assert run(home, "place", "checkout-api", "service")[1] == {
        "scope": "tenant",
        "reason": "placed_in_tenant",
        "detail": run(home, "place", "checkout-api", "service")[1]["detail"],
    }
    assert run(home, "place", "checkout-api", "service", "--known-types", "person")[1]["scope"] == "user"


def test_document_verbs(home, tmp_path):
    body = tmp_path / "runbook.md"
    body.write_text("# Runbook\n\nDeploy with two approvals.\n")
    code, doc = run(home, "doc-put", "runbook", str(body), "--metadata", '{"team": "platform"}')
    assert code == 0 and doc["chunks"] == 1
    assert run(home, "doc-get", "runbook")[1]["document"]["body"] == "# Runbook\n\nDeploy with two approvals.\n"
    assert run(home, "doc-list")[1]["count"] == 1
    hits = run(home, "search", "approvals", "--sources", "document")[1]["hits"]
    assert hits and hits[0]["kind"] == "document"
    assert run(home, "doc-delete", "runbook")[1]["verdict"] == "deleted"
    assert run(home, "doc-get", "runbook")[1]["found"] is False


def test_graph_verbs_relations_and_placed_set(home, tmp_path):
    code, doc = run(
        home,
        "set",
        "home",
        "I live in London",
        "--relation",
        "I|lives in|London",
        "--relation",
        '{"subject": "I", "relation": "works at", "object": "Acme"}',
    )
    assert code == 0 and [r["object"] for r in doc["version"]["relations"]] == ["london", "acme"]
    code, doc = run(home, "list-facts", "I", "--relation", "lives in")
    assert code == 0 and [(f["relation"], f["object"]) for f in doc["facts"]] == [("lives_in", "london")]
    code, doc = run(home, "graph-recall", "acme", "--hops", "2")
    assert code == 0 and set(doc["entities"]) == {"acme", "user", "london"}
    code, doc = run(home, "set", "bad", "x", "--relation", "only|two")
    assert code == 1 and doc["error"]["code"] == "INVALID_INPUT"
    assert run(home, "graph-recall", "acme", "--hops", "9")[1]["error"]["details"]["field"] == "hops"
    ontology = tmp_path / "ontology.md"
    ontology.write_text("## service\n- `@memory_scope` tenant\n")
    run(home, "ontology-set", str(ontology), identity=ADMIN)
    code, doc = run(
        home,
        "set",
        "owner",
        "team payments owns checkout-api",
        "--scope",
        "auto",
        "--subject",
        "checkout-api",
        "--subject-type",
        "service",
        "--relation",
        "checkout-api|owned by|team payments",
    )
    assert code == 0 and doc["placement"]["reason"] == "placed_in_tenant"
    assert run(home, "list-facts", "checkout-api", "--scope", "tenant")[1]["count"] == 1
    assert run(home, "list-facts", "checkout-api")[1]["count"] == 0


def test_extraction_verbs(home, tmp_path):
    talk = tmp_path / "talk.json"
    talk.write_text(json.dumps([{"role": "user", "name": "Ana", "content": "I moved to Lisbon last year."}]))
    code, doc = run(home, "extract", str(talk), "--session", "s1", "--session-date", "2024-03-10T15:00:00Z")
    assert code == 0 and doc["written"] == ["ana:lives_in"] and doc["evidence"] == 1
    assert run(home, "get", "ana:lives_in")[1]["fact"]["valid_at"] == "2023-01-01T00:00:00+00:00"
    later = tmp_path / "later.json"
    later.write_text(json.dumps([{"role": "user", "name": "Ana", "content": "I work at Globex."}]))
    code, doc = run(home, "extract-later", str(later))
    queue_id = doc["queue_id"]
    assert run(home, "extraction-status")[1]["counts"]["pending"] == 1
    code, doc = run(home, "work-queue", identity=())
    assert code == 0 and doc["done"] == 1
    assert run(home, "extraction-status", queue_id)[1]["jobs"][0]["status"] == "done"
    assert run(home, "get", "ana:works_at")[1]["fact"]["value"] == "Ana works at Globex"
    bad = tmp_path / "bad.json"
    bad.write_text("not json")
    assert run(home, "extract", str(bad))[1]["error"]["code"] == "INVALID_INPUT"
    assert run(home, "extract", str(talk), "--steps", "nope")[1]["error"]["details"]["field"] == "steps"
