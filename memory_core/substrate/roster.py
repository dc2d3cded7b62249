"""A lens roster: permission groups, lenses and who wears them, as one document (TOML or JSON) an
admin loads at once. ``rosters/seven.toml`` is a ready-made one: analyst, developer, steward,
architect, reviewer, watchdog and scheduler.

    [groups.contributors]
    permissions = ["read", "capture", "decide"]

    [lenses.analyst]
    title = "Analyst"
    entity_types = ["lesson", "metric", "decision"]
    groups = ["contributors"]
    [lenses.analyst.preferences]
    priorities = { metric = 2.0 }

    [assignments]
    analyst = ["agent:bob", "user:ana"]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput
from ..inputs import known_options, mapping, texts
from .lenses import CONTRACT_FIELDS, lens_id_of, parse_consumer


@dataclass(frozen=True, slots=True)
class Roster:
    groups: dict[str, tuple[str, ...]]
    lenses: dict[str, tuple[dict[str, Any], dict[str, Any] | None]]  # id -> (contract, preferences)
    assignments: dict[str, tuple[str, ...]]


def parse_roster(body: object) -> Roster:
    """The roster's sections, each name checked (a lens's fields are checked when it is defined)."""
    found = mapping(body, "roster")
    known_options(found, ("groups", "lenses", "assignments"), "a roster section")
    groups = {}
    for name, group in (mapping(found.get("groups") or {}, "groups") or {}).items():
        entry = mapping(group, f"groups.{name}")
        known_options(entry, ("permissions",), f"groups.{name}")
        groups[lens_id_of(name, "groups")] = texts(entry.get("permissions") or (), f"groups.{name}.permissions")
    lenses = {}
    for lens_id, lens in (mapping(found.get("lenses") or {}, "lenses") or {}).items():
        entry = dict(mapping(lens, f"lenses.{lens_id}"))
        preferences = entry.pop("preferences", None)
        known_options(entry, CONTRACT_FIELDS, f"lenses.{lens_id}")
        lenses[lens_id_of(lens_id)] = (entry, preferences)
    assignments = {}
    for lens_id, consumers in (mapping(found.get("assignments") or {}, "assignments") or {}).items():
        if lens_id not in lenses:
            raise InvalidInput(f"assignments name lens {lens_id!r}, which the roster does not define", field=lens_id)
        named = (parse_consumer(c, f"assignments.{lens_id}") for c in texts(consumers, lens_id))
        assignments[lens_id] = tuple(dict.fromkeys(named))  # a consumer named twice is assigned once
    if not lenses and not groups:
        raise InvalidInput("a roster defines at least one lens or permission group", field="roster")
    return Roster(groups, lenses, assignments)
