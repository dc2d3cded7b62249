"""The CLI fuzz's file arguments: a file written when the call is made (good, or one of the near
misses: not UTF-8, not JSON, nested past any limit, ...), a path that is no readable file, and
an output path."""

from __future__ import annotations

import json


class File:
    """A file argument, written when the call is made (or a path that is not a readable file)."""

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"File({self.kind!r})"


class Out:
    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __repr__(self) -> str:
        return f"Out({self.kind!r})"


GOOD_FILES = {
    "bulk-set": json.dumps([{"key": "k1", "value": "Lisbon"}, {"key": "k2", "value": {"a": [1, 2]}, "pin": True}]),
    "import": "Ana likes tea\nThe office is in Porto\n",
    "doc-put": "# Guide\n\nAna lives in Berlin.\n\n## More\n\ntext\n",
    "extract": json.dumps([{"role": "user", "content": "I live in Paris."}]),
    "extract-later": json.dumps([{"role": "user", "content": "I moved to Rome."}]),
    "observe-record": json.dumps([{"role": "user", "content": "I live in Oslo."}, {"tool": "search", "input": "x"}]),
    "ontology-set": "## person\n- `@memory_scope` user\n",
    "restore-snapshot": "SNAPSHOT",
    "lens-roster": '[groups.writers]\npermissions = ["read", "capture"]\n[lenses.ops]\ngroups = ["writers"]\n',
}
NEAR_FILES = {
    "not utf-8": b"\xff\xfe\x80 not utf-8",
    "not json": b"{not json",
    "deep json": ("[" * 5000 + "]" * 5000).encode(),
    "deep object": ('{"a":' * 50 + "1" + "}" * 50).encode(),
    "escaped surrogate": b'[{"key": "k\\ud800", "value": 1}]',
    "scalar": b"5",
    "empty": b"",
    "entries garbage": b'[{"key": "k1", "value": 1, "ttl_seconds": 1e999}, 7, {"key": "k2"}]',
    "nul": b'["a\\u0000b"]',
}
NEAR_PATHS = ["missing", "folder", "surrogate", "nul"]
