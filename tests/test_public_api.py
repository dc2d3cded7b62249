"""The public surface of ``Memory`` and ``MemoryTool``: names and signatures, checked against a
committed snapshot so that a change to what users call is always a deliberate one.

To accept a deliberate change, run ``python -m tests.test_public_api`` and commit the snapshot
together with the change (and say why in the commit).
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from memory_core import Memory, MemoryTool

SNAPSHOT = Path(__file__).parent / "snapshots" / "public_api.json"


def _signature(member: Any) -> str:
    if isinstance(member, property):
        return "property"
    if isinstance(member, (classmethod, staticmethod)):
        member = member.__func__
    signature = inspect.signature(member)
    params = [
        p.replace(default=_Named(p.default.__qualname__)) if p.default is not p.empty and callable(p.default) else p
        for p in signature.parameters.values()
    ]
    return str(signature.replace(parameters=params))


class _Named:
    """A default that is a function, shown by its name (its repr carries an address)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<{self.name}>"


def surface(cls: type) -> dict[str, str]:
    """Every public attribute the class defines or inherits (but ``object``'s), with its signature."""
    out: dict[str, str] = {}
    for klass in reversed(cls.__mro__[:-1]):
        for name, member in vars(klass).items():
            if name.startswith("_") and name not in ("__init__", "__enter__", "__exit__"):
                continue
            if callable(member) or isinstance(member, (property, classmethod, staticmethod)):
                out[name] = _signature(member)
    return dict(sorted(out.items()))


def current() -> dict[str, dict[str, str]]:
    return {"Memory": surface(Memory), "MemoryTool": surface(MemoryTool)}


def test_the_public_surface_matches_the_committed_snapshot():
    expected = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    found = current()
    for cls in ("Memory", "MemoryTool"):
        missing = sorted(set(expected[cls]) - set(found[cls]))
        added = sorted(set(found[cls]) - set(expected[cls]))
        changed = sorted(n for n in set(expected[cls]) & set(found[cls]) if expected[cls][n] != found[cls][n])
        assert not (missing or added or changed), f"{cls}: missing {missing}, added {added}, changed " + "; ".join(
            f"{n}: {expected[cls][n]} -> {found[cls][n]}" for n in changed
        )


if __name__ == "__main__":  # pragma: no cover - rewrites the snapshot on purpose
    SNAPSHOT.write_text(json.dumps(current(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {SNAPSHOT}")
