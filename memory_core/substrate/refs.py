"""Substrate references: how a view, a receipt, a frame and a decision name one thing of the
substrate. A ref is ``<plane>:<id>``: ``fact:<fact_id>`` (facts, notes and documents: the plane
is the row's kind), ``relation:<triple_id>``, ``decision:<decision_id>``, ``event:<event_id>``.
A fact's ref names the statement, stable across its versions; what exactly was disclosed (which
version, which bytes) a receipt says beside it."""

from __future__ import annotations

import re

from ..errors import InvalidInput

PLANES = ("fact", "note", "document", "relation", "decision", "event")
_REF = re.compile(r"^(fact|note|document|relation|decision|event):([A-Za-z0-9_.:-]{1,200})$")
MAX_REFS = 1000


def ref(plane: str, ident: str) -> str:
    return f"{plane}:{ident}"


def parse_ref(value: object, field: str = "ref") -> tuple[str, str]:
    """(plane, id) of a ref, or the typed refusal naming the field."""
    found = _REF.match(value) if isinstance(value, str) else None
    if found is None:
        raise InvalidInput(
            f"{field} must be a substrate ref <plane>:<id> with a plane of {', '.join(PLANES)}; got {value!r:.80}",
            field=field,
        )
    return found.group(1), found.group(2)


def parse_refs(values: object, field: str) -> tuple[str, ...]:
    """A list of refs, each checked, duplicates dropped (first kept)."""
    if values is None:
        return ()
    if isinstance(values, (str, bytes)) or not isinstance(values, (list, tuple, set, frozenset)):
        raise InvalidInput(f"{field} must be a list of substrate refs", field=field)
    items = sorted(values) if isinstance(values, (set, frozenset)) else list(values)
    if len(items) > MAX_REFS:
        raise InvalidInput(f"{field} holds {len(items)} refs; the limit is {MAX_REFS}", field=field)
    out: dict[str, None] = {}
    for i, item in enumerate(items):
        parse_ref(item, f"{field}[{i}]")
        out.setdefault(item, None)
    return tuple(out)
