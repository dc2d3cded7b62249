"""The signature a receiver checks: HMAC-SHA256 over the timestamp and the body, sent with the
timestamp, so a receiver can refuse a replayed or a forged delivery.

    X-Memcore-Signature: t=1733224800,v1=5f3c...   (hex HMAC-SHA256 of b"1733224800." + body)
"""

from __future__ import annotations

import hashlib
import hmac

SIGNATURE_HEADER = "X-Memcore-Signature"
EVENT_ID_HEADER = "X-Memcore-Event-Id"
EVENT_TYPE_HEADER = "X-Memcore-Event"
DEFAULT_TOLERANCE_S = 300


def sign(secret: str, timestamp: int, body: bytes) -> str:
    message = str(int(timestamp)).encode("ascii") + b"." + body
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def signed_headers(secret: str, timestamp: int, body: bytes, event_id: str, event_type: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        SIGNATURE_HEADER: f"t={int(timestamp)},v1={sign(secret, timestamp, body)}",
        EVENT_ID_HEADER: event_id,
        EVENT_TYPE_HEADER: event_type,
    }


def verify(secret: str, header: str, body: bytes, now: int, *, tolerance_s: int = DEFAULT_TOLERANCE_S) -> bool:
    """What a receiver runs: the signature matches and the timestamp is within ``tolerance_s``
    of ``now`` (a replay of an old delivery fails)."""
    try:
        parts = dict(p.split("=", 1) for p in header.split(","))
        timestamp = int(parts["t"])
    except (KeyError, ValueError):
        return False
    if abs(now - timestamp) > tolerance_s:
        return False
    return hmac.compare_digest(parts.get("v1", ""), sign(secret, timestamp, body))
