"""Canonical JSON for stored values, and the content hash that identifies a value."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .errors import NotSerializable

# One encoder for every call: json.dumps with options builds a new one each time, which cost a
# bulk write of 100k values 0.15 s. Encoding keeps no state between calls, so threads may share it.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no insignificant spaces, UTF-8 kept as is.

    NaN and infinities are refused because JSON has no spelling for them.
    """
    try:
        return _CANONICAL.encode(value)
    except (TypeError, ValueError) as exc:
        raise NotSerializable(
            f"value is not JSON-serializable ({exc}); pass str, int, float, bool, None, list or dict",
        ) from None


def content_sha256(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
