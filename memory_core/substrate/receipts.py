"""Receipts: a signed record of what a view, a context or a capture disclosed, to whom.

A receipt lists each thing disclosed by its ref, the version row and the content hash (never the
value), and says to which consumer, through which lenses and frame, when (``issued_at``) and at
which point of the store's history (``store_seq``: the version log's sequence the answer was read
at). The home signs it with an Ed25519 key of its receipt keyring; the key id travels with the
receipt, so a receipt signed before a key rotation still verifies with the old public key.

The signature covers every field but itself, as canonical JSON (sorted names, no spaces) after a
domain line, so a receipt cannot be replayed as any other signed message and no field can change
without the signature failing. Checking needs only the receipt and the public keys: nothing here
reads a store or a file (``memcore receipt verify FILE`` is the offline check).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Mapping

from ..errors import ReceiptInvalid, ReceiptKeyUnknown
from ..temporal import parse_instant

DOMAIN = b"memory_core receipt v1\n"
KINDS = ("render", "context", "capture")


@dataclass(frozen=True, slots=True)
class Disclosed:
    ref: str
    version_id: str | None
    content_sha256: str


@dataclass(frozen=True, slots=True)
class Receipt:
    receipt_id: str
    kind: str
    issuer: str  # the home that signed it (its identity marker)
    tenant: str
    consumer: str
    lenses: tuple[str, ...]
    frame_id: str | None
    issued_at: datetime
    store_seq: int
    disclosed: tuple[Disclosed, ...]
    key_id: str
    signature: str = ""


FIELDS = (
    "receipt_id",
    "kind",
    "issuer",
    "tenant",
    "consumer",
    "lenses",
    "frame_id",
    "issued_at",
    "store_seq",
    "disclosed",
    "key_id",
    "signature",
)


def body_of(receipt: Receipt) -> dict[str, Any]:
    """Every field as JSON data, the signature included."""
    return {
        "receipt_id": receipt.receipt_id,
        "kind": receipt.kind,
        "issuer": receipt.issuer,
        "tenant": receipt.tenant,
        "consumer": receipt.consumer,
        "lenses": list(receipt.lenses),
        "frame_id": receipt.frame_id,
        "issued_at": receipt.issued_at.isoformat(),
        "store_seq": receipt.store_seq,
        "disclosed": [
            {"ref": d.ref, "version_id": d.version_id, "content_sha256": d.content_sha256} for d in receipt.disclosed
        ],
        "key_id": receipt.key_id,
        "signature": receipt.signature,
    }


def message(receipt: Receipt) -> bytes:
    """The bytes the signature covers: the domain line, then every field but the signature."""
    body = body_of(receipt)
    del body["signature"]
    return DOMAIN + json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def _str(body: Mapping[str, Any], name: str, optional: bool = False) -> str | None:
    value = body.get(name)
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value:
        raise ReceiptInvalid(f"receipt field {name} must be non-empty text", field=name)
    return value


def parse_receipt(body: object) -> Receipt:
    """A receipt from its JSON form, every field checked (an unknown or missing field refuses it)."""
    if isinstance(body, Receipt):
        return body
    if not isinstance(body, Mapping):
        raise ReceiptInvalid("a receipt is a JSON object")
    unknown = sorted(set(body) - set(FIELDS))
    missing = sorted(set(FIELDS) - set(body))
    if unknown or missing:
        raise ReceiptInvalid(f"receipt fields unknown {unknown} / missing {missing}", unknown=unknown, missing=missing)
    lenses = body["lenses"]
    disclosed = body["disclosed"]
    if not isinstance(lenses, list) or not all(isinstance(x, str) for x in lenses):
        raise ReceiptInvalid("receipt field lenses must be a list of lens ids", field="lenses")
    if not isinstance(disclosed, list):
        raise ReceiptInvalid("receipt field disclosed must be a list", field="disclosed")
    items = []
    for entry in disclosed:
        if not isinstance(entry, Mapping) or set(entry) != {"ref", "version_id", "content_sha256"}:
            raise ReceiptInvalid("each disclosed entry is {ref, version_id, content_sha256}", field="disclosed")
        items.append(
            Disclosed(_str(entry, "ref"), _str(entry, "version_id", optional=True), _str(entry, "content_sha256"))
        )
    seq = body["store_seq"]
    if isinstance(seq, bool) or not isinstance(seq, int) or seq < 0:
        raise ReceiptInvalid("receipt field store_seq must be a whole number", field="store_seq")
    try:
        issued = parse_instant(body["issued_at"], "issued_at")
    except Exception as exc:  # noqa: BLE001 - any malformed instant is the same refusal
        raise ReceiptInvalid(f"receipt field issued_at: {exc}", field="issued_at") from None
    if issued is None or issued.isoformat() != body["issued_at"]:
        # Only the spelling it was signed in: another spelling of the same instant is another byte.
        raise ReceiptInvalid("receipt field issued_at must be an instant as the home wrote it", field="issued_at")
    kind = _str(body, "kind")
    if kind not in KINDS:
        raise ReceiptInvalid(f"receipt kind must be one of {', '.join(KINDS)}", field="kind")
    return Receipt(
        receipt_id=_str(body, "receipt_id"),
        kind=kind,
        issuer=_str(body, "issuer"),
        tenant=_str(body, "tenant"),
        consumer=_str(body, "consumer"),
        lenses=tuple(lenses),
        frame_id=_str(body, "frame_id", optional=True),
        issued_at=issued,
        store_seq=seq,
        disclosed=tuple(items),
        key_id=_str(body, "key_id"),
        signature=_str(body, "signature"),
    )


# (key_id, message, signature hex) -> True / False, or None when no key of that id is known.
Verifier = Callable[[str, bytes, str], "bool | None"]


def check_receipt(receipt: object, verify: Verifier) -> Receipt:
    """The receipt, when its signature verifies over every field; otherwise the typed refusal
    (``RECEIPT_KEY_UNKNOWN`` for a key the verifier does not hold)."""
    found = parse_receipt(receipt)
    verdict = verify(found.key_id, message(found), found.signature)
    if verdict is None:
        raise ReceiptKeyUnknown(f"no public key {found.key_id!r} to check this receipt with", key_id=found.key_id)
    if not verdict:
        raise ReceiptInvalid("the receipt's signature does not verify: it was changed or not signed by this key")
    return found
