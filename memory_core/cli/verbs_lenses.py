"""Lenses and receipts from a shell: lens-define, lens-assign, lens-unassign, lens-expire,
lens-list, lens-roster, permission-group (admin, but lens-list); and ``memcore receipt verify
FILE`` (offline: the receipt and a public key, no store), ``receipt keys``, ``receipt rotate``."""

from __future__ import annotations

import json
import tomllib
from importlib import resources
from pathlib import Path
from typing import Any

from ..adapters.duckdb.home import KEY_DIR
from ..adapters.receipt_keys import FileKeyring, read_public_keys, verify_with
from ..errors import InvalidInput
from ..substrate.receipts import check_receipt
from ..wire import encode
from .io import json_option, read_file
from .registry import Call, Output, UsageError, arg, verb

LIST = {"action": "append", "metavar": "NAME"}


def _lens_line(info: Any) -> str:
    c = info.contract
    return (
        f"{info.lens_id} v{info.version}  types={','.join(c['entity_types'])}  "
        f"can={','.join(info.capabilities)}  scopes={','.join(c['scopes'])}"
        + (f"  worn by {', '.join(info.worn_by)}" if info.worn_by else "")
        + ("  (expired)" if info.expired else "")
    )


@verb(
    "lens-define",
    "define a lens or a new version of it (admin)",
    arg("lens_id"),
    arg("--title"),
    arg("--entity-type", dest="entity_types", help="a memory type it admits (repeat; * for all)", **LIST),
    arg("--relationship", dest="relationships", help="a graph relation it admits (repeat)", **LIST),
    arg("--watch", dest="watches", help="a state-change type it watches: fact.superseded, fact.*, *", **LIST),
    arg("--capability", dest="capabilities", help="read, capture, decide or approve (repeat)", **LIST),
    arg("--group", dest="groups", help="a permission group whose capabilities it gains (repeat)", **LIST),
    arg("--read-scope", dest="read_scopes", help="a scope it reads: agent, user, tenant, global", **LIST),
    arg("--cross-lens", dest="cross_lens", help="a lens whose captures it reads too (repeat)", **LIST),
    arg("--max-sensitivity", choices=["low", "normal", "high"]),
    arg("--expires-at", help="an ISO 8601 instant"),
    arg("--preferences", help='JSON: {"priorities": {"lesson": 2}, "tags": [...], "half_life_days": 30}'),
    scope=False,
    writes=True,
)
def lens_define(call: Call) -> Output:
    a = call.args
    info = call.tool.lens_define(
        a.lens_id,
        title=a.title,
        entity_types=a.entity_types,
        relationships=a.relationships,
        watches=a.watches,
        capabilities=a.capabilities,
        groups=a.groups,
        scopes=a.read_scopes,
        cross_lens=a.cross_lens,
        max_sensitivity=a.max_sensitivity,
        expires_at=a.expires_at,
        preferences=json_option(a.preferences, "preferences"),
    )
    return encode(info), _lens_line(info), 0


@verb(
    "lens-assign",
    "let CONSUMER (agent:ID, user:ID) wear a lens (admin)",
    arg("lens_id"),
    arg("consumer"),
    scope=False,
    writes=True,
)
def lens_assign(call: Call) -> Output:
    info = call.tool.lens_assign(call.args.lens_id, call.args.consumer)
    return encode(info), _lens_line(info), 0


@verb(
    "lens-unassign", "take a lens back from CONSUMER (admin)", arg("lens_id"), arg("consumer"), scope=False, writes=True
)
def lens_unassign(call: Call) -> Output:
    info = call.tool.lens_unassign(call.args.lens_id, call.args.consumer)
    return encode(info), _lens_line(info), 0


@verb("lens-expire", "expire a lens (admin)", arg("lens_id"), arg("--at", help="default now"), scope=False, writes=True)
def lens_expire(call: Call) -> Output:
    info = call.tool.lens_expire(call.args.lens_id, at=call.args.at)
    return encode(info), _lens_line(info), 0


@verb("lens-list", "the tenant's lenses (admin), or those you wear", scope=False)
def lens_list(call: Call) -> Output:
    found = call.tool.lenses()
    return {"count": len(found), "lenses": encode(found)}, "\n".join(map(_lens_line, found)) or "(no lenses)", 0


def roster_of(file: str | None, ready_made: str | None) -> dict[str, Any]:
    """A roster document: TOML or JSON from FILE, or a ready-made roster shipped with memory_core."""
    if ready_made is not None:
        found = resources.files("memory_core.substrate") / "rosters" / f"{ready_made}.toml"
        if not found.is_file():
            raise InvalidInput(f"no ready-made roster {ready_made!r}", field="ready_made")
        return tomllib.loads(found.read_text(encoding="utf-8"))
    if file is None:
        raise UsageError("lens-roster needs a FILE, or --ready-made seven")
    body = read_file(file)
    try:
        return json.loads(body) if file.endswith(".json") or body.lstrip().startswith("{") else tomllib.loads(body)
    except (ValueError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInput(f"{file} is neither a TOML nor a JSON roster: {exc}", field="file") from None


@verb(
    "lens-roster",
    "load a roster of permission groups, lenses and assignments (admin): TOML or JSON",
    arg("file", nargs="?", help="the roster, or - for standard input"),
    arg("--ready-made", choices=["seven"], help="the shipped roster: analyst, developer, steward, ..."),
    scope=False,
    writes=True,
)
def lens_roster(call: Call) -> Output:
    loaded = call.tool.lens_roster_load(roster_of(call.args.file, call.args.ready_made))
    text = f"roster: {len(loaded.groups)} groups, {len(loaded.lenses)} lenses, {loaded.assignments} assignments"
    return encode(loaded), text, 0


@verb(
    "permission-group",
    "define a permission group: GROUP CAPABILITY... (admin)",
    arg("group"),
    arg("permissions", nargs="+", help="read, capture, decide, approve"),
    scope=False,
    writes=True,
)
def permission_group(call: Call) -> Output:
    doc = call.tool.permission_group_define(call.args.group, call.args.permissions)
    return doc, f"{doc['group']}: {', '.join(doc['permissions'])}", 0


def _receipt_in(body: Any) -> Any:
    """The receipt a file holds: a receipt, or an answer carrying one (``memcore context --json``)."""
    if isinstance(body, dict) and "receipt" in body and isinstance(body["receipt"], dict):
        return body["receipt"]
    return body


@verb(
    "receipt",
    "receipts: verify FILE offline (against --public-key, --keys DIR or the home's), keys, rotate",
    arg("action", choices=["verify", "keys", "rotate"]),
    arg("file", nargs="?", help="verify: the receipt (JSON), or - for standard input"),
    arg("--public-key", help="verify: an Ed25519 public key (hex) to check against"),
    arg("--keys", help="verify: a folder of <key_id>.pub files (default: the home's keys/receipts)"),
    scope=False,
    identity=False,
    opens_home=False,
    writes=lambda args: args.action == "rotate",
)
def receipt(call: Call) -> Output:
    a = call.args
    keys_dir = Path(a.keys) if a.keys else (call.home / KEY_DIR / "receipts" if call.home else None)
    if a.action == "rotate":
        if call.home is None:
            raise UsageError("receipt rotate works on the home itself (not through --url)")
        key_id = FileKeyring(call.home / KEY_DIR).rotate()
        return {"rotated": True, "key_id": key_id}, f"receipts are now signed with {key_id}", 0
    known = read_public_keys(keys_dir) if keys_dir is not None and keys_dir.exists() else {}
    if a.action == "keys":
        return {"keys": known}, "\n".join(f"{k}  {v}" for k, v in known.items()) or "(no receipt keys yet)", 0
    if a.file is None:
        raise UsageError("receipt verify needs the receipt's FILE")
    try:
        body = json.loads(read_file(a.file))
    except ValueError as exc:
        raise InvalidInput(f"{a.file} is not JSON: {exc}", field="file") from None

    def verify(key_id: str, message: bytes, signature: str) -> bool | None:
        public = a.public_key or known.get(key_id)
        return None if public is None else verify_with(public, message, signature)

    found = check_receipt(_receipt_in(body), verify)
    text = f"receipt {found.receipt_id} verifies: {len(found.disclosed)} refs disclosed to {found.consumer}"
    return {"verified": True, "receipt_id": found.receipt_id, "key_id": found.key_id}, text, 0
