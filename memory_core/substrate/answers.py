"""What the remember ops answer: plain frozen records (every face — Python, HTTP, MCP, CLI —
gives back the same fields)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from ..model import FactVersion
from .context import IndexLine, PassTrace
from .receipts import Receipt


@dataclass(frozen=True, slots=True)
class LensInfo:
    lens_id: str
    version: int
    title: str
    contract: dict[str, Any]
    preferences: dict[str, Any]
    capabilities: tuple[str, ...]  # the contract's and its permission groups', together
    worn_by: tuple[str, ...]  # the consumers it is assigned to
    expired: bool


@dataclass(frozen=True, slots=True)
class ViewItem:
    """One item of a view or a context, with why it is there and why it ranked where it did."""

    ref: str
    plane: str
    scope: str
    key: str
    text: str
    value: Any
    entity_type: str | None
    version_id: str | None
    content_sha256: str
    valid_at: datetime
    lenses: tuple[str, ...]  # the worn lenses that admit it
    why: dict[str, Any]  # priority, recency, tag_match, value_per_token, score, matched; pass; rank
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class View:
    """``render(substrate, lens, frame)``: everything the worn lenses admit in the scopes read,
    less what the frame suppresses, ranked for the frame; and the receipt of its disclosure."""

    items: tuple[ViewItem, ...]
    lenses: tuple[str, ...]
    scopes: tuple[str, ...]
    frame_id: str | None
    receipt: Receipt
    interaction_id: str


@dataclass(frozen=True, slots=True)
class ContextAnswer:
    """``get_context``: lessons and precedent fitted to a token budget, each item explained."""

    lessons: tuple[ViewItem, ...]
    precedent: tuple[ViewItem, ...]
    left_out: tuple[IndexLine, ...]  # an index of matching items that did not fit (when asked for)
    left_out_total: int
    passes: tuple[PassTrace, ...]
    tokens_used: int
    token_budget: int
    token_counter: str
    lenses: tuple[str, ...]
    scopes: tuple[str, ...]
    frame_id: str | None
    shadowed: dict[str, str]  # a broader item's ref -> the narrower one of the same key that hid it
    receipt: Receipt
    interaction_id: str
    # The caller's structured profile, packed first when a worn lens admits it and it fits; its
    # ``why`` marks it derived and says whether it is stale (docs/workers.md, structured_profile).
    profile: ViewItem | None = None


@dataclass(frozen=True, slots=True)
class CaptureResult:
    verdict: str
    key: str
    version: FactVersion | None
    details: dict[str, Any]
    receipt: Receipt


@dataclass(frozen=True, slots=True)
class FactDiff:
    """One fact of an event: its version rows before and after, each changed field, and the value
    before and after where the reader may see it (``withheld`` names why not)."""

    fact_id: str
    key: str
    before_version_id: str | None
    after_version_id: str
    changes: dict[str, list[Any]]  # field -> [before, after]
    value_before: Any = None
    value_after: Any = None
    withheld: str | None = None


@dataclass(frozen=True, slots=True)
class EventView:
    seq: int
    event_id: str
    event_type: str
    scope: str
    key: str
    entity: str | None
    memory_type: str | None
    actor: str
    actor_chain: tuple[str, ...]
    lens_id: str | None
    frame_id: str | None
    facts: tuple[FactDiff, ...]
    evidence: tuple[str, ...]
    summary: dict[str, Any]
    recorded_at: datetime


@dataclass(frozen=True, slots=True)
class EventPage:
    events: tuple[EventView, ...]
    next_since: int  # pass it as ``since`` to read on from here
    lenses: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Feedback:
    interaction_id: str
    ref: str
    verdict: str


@dataclass(frozen=True, slots=True)
class RosterLoaded:
    groups: tuple[str, ...]
    lenses: tuple[str, ...]
    assignments: int
    details: dict[str, Any] = field(default_factory=dict)
