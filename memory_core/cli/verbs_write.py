"""The lifecycle and batch verbs: lock / pin / demote / reject, delete-version, redact,
bulk-set, import, snapshot, restore-snapshot, rollback and sweep-expired."""

from __future__ import annotations

import json

from .io import counts_line, entries, json_file, read_file, write_line, write_text
from .registry import Call, Output, arg, verb

FLAG_VERBS = {
    "lock": "refuse every change of the key's value until unlocked (423)",
    "unlock": "allow changes again",
    "pin": "refuse a changed value (409) unless the write pins too; refuse close peers",
    "unpin": "remove the pin",
    "demote": "make an established fact a proposal again (half its confidence, no expiry)",
    "reject": "mark the live value wrong: hidden, kept in history, undone by restore",
}


def _flag(name: str) -> None:
    @verb(name, FLAG_VERBS[name], key=True, writes=True)
    def run(call: Call) -> Output:
        result = getattr(call.tool, name)(call.args.key, scope=call.args.scope)
        return result.to_dict(), write_line(result), 0


for _name in FLAG_VERBS:
    _flag(_name)


@verb(
    "delete-version",
    "delete the key only while VERSION (as read) is still its head",
    arg("version", type=int),
    key=True,
    writes=True,
)
def delete_version(call: Call) -> Output:
    result = call.tool.delete_version(call.args.key, call.args.version, scope=call.args.scope)
    return result.to_dict(), write_line(result), 0


@verb(
    "redact",
    "scrub one historical version's value (and its copies) in place; not the live head",
    arg("version_id"),
    key=True,
    writes=True,
)
def redact(call: Call) -> Output:
    result = call.tool.redact(call.args.key, call.args.version_id, scope=call.args.scope)
    return result.to_dict(), f"redacted {result.details['versions_redacted']} version(s) of {call.args.key}", 0


_BATCH = (
    arg("file", help="a file, or - for standard input"),
    arg("--dry-run", action="store_true", help="run every check, write nothing"),
)


def _batch(call: Call, plain_lines: bool) -> Output:
    items = entries(read_file(call.args.file), plain_lines=plain_lines)
    run = call.tool.import_items if plain_lines else call.tool.bulk_set
    doc = run(items, scope=call.args.scope, dry_run=call.args.dry_run).to_dict()
    return doc, " ".join(f"{k}={v if not isinstance(v, list) else len(v)}" for k, v in doc.items()), 0


@verb("bulk-set", "write a JSON list (or JSON lines) of {key, value, ...} in one transaction", *_BATCH, writes=True)
def bulk_set(call: Call) -> Output:
    return _batch(call, plain_lines=False)


@verb("import", "import texts (JSON list of strings or {text, valid_at, ...}; or plain lines)", *_BATCH, writes=True)
def import_(call: Call) -> Output:
    return _batch(call, plain_lines=True)


@verb(
    "snapshot",
    "print the scope's live facts as a portable payload",
    arg("--out", help="write the payload to this file instead"),
)
def snapshot(call: Call) -> Output:
    payload = call.tool.snapshot(scope=call.args.scope)
    if call.args.out:
        write_text(call.args.out, json.dumps(payload, ensure_ascii=False, indent=1))
        doc = {"snapshot_id": payload["snapshot_id"], "rows": len(payload["rows"]), "out": call.args.out}
        return doc, f"snapshot {payload['snapshot_id']}: {len(payload['rows'])} facts -> {call.args.out}", 0
    return payload, json.dumps(payload, ensure_ascii=False, indent=1), 0


@verb(
    "restore-snapshot",
    "write a snapshot payload into the scope (once per snapshot_id)",
    arg("file", help="a payload file, or - for standard input"),
    writes=True,
)
def restore_snapshot(call: Call) -> Output:
    result = call.tool.restore_snapshot(json_file(call.args.file, "snapshot file"), scope=call.args.scope)
    return result.to_dict(), f"{result.verdict}: {len(result.rows)} version rows", 0


@verb(
    "rollback",
    "put every key of the scope back to an instant (dry run unless --apply)",
    arg("--to", required=True, help="the instant (ISO-8601 with zone)"),
    arg("--apply", action="store_true", help="write the rollback (default: show the plan)"),
    writes=True,
)
def rollback(call: Call) -> Output:
    plan = call.tool.rollback(call.args.to, scope=call.args.scope, apply=call.args.apply)
    lines = [f"{s.action:<15} {s.key}" for s in plan.steps]
    head = "applied" if plan.applied else "dry run (add --apply to write it)"
    text = "\n".join([f"rollback to {plan.to.isoformat()}: {head}", *lines, f"{plan.unchanged} key(s) unchanged"])
    return plan.to_dict(), text, 0


@verb(
    "sweep-expired",
    "apply on_expire to every fact past its expires_at (all tenants)",
    scope=False,
    identity=False,
    writes=True,
    remote=True,
)
def sweep_expired(call: Call) -> Output:
    counts = (call.remote or call.memory).sweep_expired()
    return counts, counts_line(counts), 0
