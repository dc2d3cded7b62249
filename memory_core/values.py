"""Canonical JSON for stored values, and the content hash that identifies a value."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .errors import NotSerializable, ValueTooDeep, ValueTooLarge
from .inputs import MAX_DEPTH, check_tree, utf8

# One encoder for every call: json.dumps with options builds a new one each time, which cost a
# bulk write of 100k values 0.15 s. Encoding keeps no state between calls, so threads may share it.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
# The most a stored value may take as canonical JSON (a document is chunked far below it).
MAX_VALUE_CHARS = 1_000_000


def canonical_json(value: Any, *, levels_above: int = 0, max_chars: int | None = MAX_VALUE_CHARS) -> str:
    """One spelling per value: sorted keys, no insignificant spaces, UTF-8 kept as is.

    NaN and infinities are refused because JSON has no spelling for them; a lone surrogate
    because UTF-8 has none; nesting past ``inputs.MAX_DEPTH`` and text past ``MAX_VALUE_CHARS``
    because no reader needs them (and the encoder would exhaust the stack first).
    A document of several values (a snapshot's rows) names the levels it adds above them
    (``levels_above``) and sets no size cap of its own (``max_chars=None``).
    """
    if isinstance(value, (dict, list, tuple)):
        check_tree(value, "value", MAX_DEPTH + levels_above)  # depth first: the encoder recurses
    try:
        text = _CANONICAL.encode(value)
    except (TypeError, ValueError) as exc:
        raise NotSerializable(
            f"value is not JSON-serializable ({exc}); pass str, int, float, bool, None, list or dict",
        ) from None
    except RecursionError:  # a container inside something check_tree does not walk
        raise ValueTooDeep("value nests too deep to store", field="value") from None
    if max_chars is not None and len(text) > max_chars:
        raise ValueTooLarge(f"value is {len(text)} characters as JSON; the limit is {max_chars}", field="value")
    return utf8(text, "value")


def content_sha256(canonical: str) -> str:
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
