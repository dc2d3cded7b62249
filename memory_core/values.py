"""Canonical JSON for stored values, and the content hash that identifies a value."""
from __future__ import annotations

import hashlib
import json
from typing import Any

from .errors import NotSerializable


def canonical_json(value: Any) -> str:
    """One spelling per value: sorted keys, no insignificant spaces, UTF-8 kept as is.

    NaN and infinities are refused because JSON has no spelling for them.
    """
    try:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise NotSerializable(
            f"value is not JSON-serializable ({exc}); pass str, int, float, bool, None, list or dict",
        ) from None


def content_sha256(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
