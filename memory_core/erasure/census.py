"""The residue census: what an erasure looks for (needles), what it counted, and which step owns
what it found."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

# A string shorter than this is too common to prove anything by its absence ("Paris", "yes").
MIN_NEEDLE = 8
# A longer text (a document's chunk) is looked for line by line, each line by its first
# MAX_NEEDLE characters: a copy of any line is found, and no pattern grows past what the
# engine's regular expressions hold.
MAX_NEEDLE = 256
# Ids, digests, instants and numbers are not what a person wrote: the chain keeps ids.
_NOT_CONTENT = re.compile(r"^(?:(?:[a-z_]+:)?[0-9a-f]{16,}|[0-9:.+\-TZ ]+|(?:true|false|null))$", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Census:
    """Rows still in scope per table (every classified table, zeros included), and occurrences of
    the erased strings per place: per table for the store's text, per file under the home."""

    tables: Mapping[str, int]
    text_hits: Mapping[str, int] = field(default_factory=dict)
    file_hits: Mapping[str, int] = field(default_factory=dict)
    needles: int = 0  # how many distinct strings it looked for
    files_scanned: int = 0

    @property
    def residue_count(self) -> int:
        return sum(self.tables.values()) + sum(self.text_hits.values()) + sum(self.file_hits.values())

    def counts(self) -> dict[str, int]:
        """Every count, zeros included (files: those that held something), and what was looked
        at (``census:``, not residue)."""
        out = {f"rows:{t}": n for t, n in sorted(self.tables.items())}
        out |= {f"text:{t}": n for t, n in sorted(self.text_hits.items())}
        out |= {f"file:{p}": n for p, n in sorted(self.file_hits.items()) if n}
        return out | {"census:needles": self.needles, "census:files_scanned": self.files_scanned}


# Which step removes what the census may find in a place.
_AUDIT = ("audit_log", "audit_digests")


def owning_step(census: Census) -> frozenset[str]:
    owners: set[str] = set()
    for table, n in (*census.tables.items(), *census.text_hits.items()):
        if n:
            owners.add("audit_keys" if table in _AUDIT else "rows")
    for path, n in census.file_hits.items():
        if not n:
            continue
        if path.startswith("lance/"):
            owners.add("index")
        elif path.startswith("sql/"):
            owners.add("sql")
        elif path.startswith("memory.duckdb"):
            owners.add("compact")
        else:
            owners.add("caches")
    return frozenset(owners)


# Fields whose values name who or what acted (an actor, a run, a session, a model), identifiers
# the audit chain keeps by design (``docs/erasure.md``), or hold the store's own vocabulary (an
# event's field-by-field changes, kinds, statuses, classes): never what a person wrote.
ID_FIELDS = frozenset(
    {
        "identity",  # a queued job's run identity
        "type",  # a webhook body's event type, and its identity tuple below
        "tenant",
        "scope",
        "owner_id",
        "event_id",
        "occurred_at",
        "changes",
        "kind",
        "memory_type",
        "sensitivity",
        "source_class",
        "status",
        "op",
        "summary",
        "recorded_at",
        "lens_id",
        "actor",
        "actor_chain",
        "changed_by",
        "consumer",
        "on_expire",
        "conflict_with",
        "prov_tenant",
        "prov_session",
        "prov_run",
        "prov_agent",
        "prov_model",
        "prov_origin",
        "prov_actor",
        "prov_source_turn",
        "requested_by",
        "judge",
        "judged_by",  # a reviewer's affirmation (``verify``): who vouched, and when
        "judged_at",
        "prov_judged_by",
        "prov_judged_at",
    }
)


def _leaves(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        # A field's name is structure (the store's own columns and attributes are named alike);
        # a field that names who acted holds an identifier. Neither is what a person wrote.
        for k, v in value.items():
            if k not in ID_FIELDS:
                yield from _leaves(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaves(v)


def text_leaves(text: str | None) -> Iterable[str]:
    """A stored text's strings: a JSON text's string leaves, else the text."""
    if not text:
        return
    try:
        yield from _leaves(json.loads(text))
    except ValueError:
        yield text


def pick_needles(
    texts: Iterable[str | None], *, min_len: int = MIN_NEEDLE, identifiers: Iterable[str] = ()
) -> tuple[str, ...]:
    """The strings an erasure looks for afterwards: every string leaf of the erased rows' text
    columns long enough to mean something, once each, sorted; never one of ``identifiers`` (the
    target's own ids, which the request row and the chain keep)."""
    found: set[str] = set()
    for text in texts:
        for leaf in text_leaves(text):
            pieces = [leaf] if len(leaf) <= MAX_NEEDLE else leaf.splitlines()
            found.update(p.strip()[:MAX_NEEDLE].strip() for p in pieces)
    found -= set(identifiers)
    return tuple(sorted(n for n in found if len(n.encode("utf-8")) >= min_len and not _NOT_CONTENT.match(n)))
