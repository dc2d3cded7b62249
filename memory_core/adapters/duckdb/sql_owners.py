"""Whose each SQL memory database is. A database's file name is a digest of its namespace (an
owner id never steers a path), so a note beside it (``<file>.owner.json``) names the namespace:
an erasure of a whole tenant finds every database of the tenant by its notes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Sequence

from ...identity import Namespace, Scope


class SqlOwners:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, namespace: Namespace) -> Path:
        digest = hashlib.sha256(
            json.dumps([namespace.tenant, namespace.scope.value, namespace.owner_id]).encode()
        ).hexdigest()[:32]
        return self.root / f"{namespace.scope.value}-{digest}.duckdb"

    @staticmethod
    def note(path: Path, namespace: Namespace) -> None:
        owner = path.with_suffix(".owner.json")
        if not owner.exists():
            owner.parent.mkdir(parents=True, exist_ok=True)
            owner.write_text(json.dumps([namespace.tenant, namespace.scope.value, namespace.owner_id]))

    def databases(self, tenant: str, pairs: Sequence[tuple[str, str]] | None) -> list[Path]:
        """The files (databases, their write-ahead logs, their notes) of a tenant, or of its
        (scope, owner) pairs."""
        found: set[Path] = set()
        for note in self.root.glob("*.owner.json") if self.root.exists() else ():
            t, scope, owner = json.loads(note.read_text())
            if t == tenant and (pairs is None or (scope, owner) in pairs):
                found.add(note)
        for scope, owner in pairs or ():
            if scope in {s.value for s in Scope}:
                found.add(self.path_for(Namespace(tenant, Scope(scope), owner)).with_suffix(".owner.json"))
        files = [p for note in found for p in (note.with_name(note.name.replace(".owner.json", ".duckdb")), note)]
        return sorted({p for f in files for p in (f, f.with_name(f.name + ".wal")) if p.exists()})

    def note_owners(self, tenant: str, pairs: Sequence[tuple[str, str]]) -> int:
        """Write the note of each existing database of these (scope, owner) pairs that has none
        (made before notes were written); answers how many."""
        noted = 0
        for scope, owner in pairs:
            if scope not in {s.value for s in Scope}:
                continue
            namespace = Namespace(tenant, Scope(scope), owner)
            path = self.path_for(namespace)
            if path.exists() and not path.with_suffix(".owner.json").exists():
                self.note(path, namespace)
                noted += 1
        return noted

    def unattributed(self) -> list[Path]:
        """Databases whose owner no note names."""
        found = self.root.glob("*.duckdb") if self.root.exists() else ()
        return sorted(p for p in found if not p.with_suffix(".owner.json").exists())
