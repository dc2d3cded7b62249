"""The Memory tool's remember ops (``MemoryTool`` lists each of them in its class body): lenses,
frames, captures, decision traces, ``render``, ``get_context``, retrieval feedback, the event
stream and receipts. Each is a delegation to its service (``docs/remember.md``)."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

from ..identity import Scope
from ..services.captures import CaptureService
from ..services.context import ContextService
from ..services.events import EventsService
from ..services.frames import FrameService
from ..services.lenses import LensService, contract_of
from ..substrate.answers import CaptureResult, ContextAnswer, EventPage, Feedback, LensInfo, RosterLoaded, View
from ..substrate.decisions import DecisionTrace
from ..substrate.frames import Frame
from ..substrate.receipts import Receipt, check_receipt
from ..temporal import Instant

# -- lenses (admin) --------------------------------------------------------------------------------


def lens_define(
    self,
    lens_id: str,
    *,
    title: str | None = None,
    entity_types: Sequence[str] | None = None,
    relationships: Sequence[str] | None = None,
    watches: Sequence[str] | None = None,
    capabilities: Sequence[str] | None = None,
    groups: Sequence[str] | None = None,
    scopes: Sequence[str] | None = None,
    cross_lens: Sequence[str] | None = None,
    max_sensitivity: str | None = None,
    expires_at: Instant = None,
    preferences: Mapping[str, Any] | None = None,
) -> LensInfo:
    """Define a lens, or a new version of one (admin): the entity types (memory types; ``decision``
    for decision traces) and graph relations it admits (``*``: all), the state-change types it
    watches, its capabilities (read, capture, decide, approve) and permission groups, the scopes
    it reads, the lenses whose captures it may read too, the most sensitive row it shows, when it
    expires, and its ranking preferences ({priorities, tags, half_life_days})."""
    contract = contract_of(
        title=title,
        entity_types=entity_types,
        relationships=relationships,
        watches=watches,
        capabilities=capabilities,
        groups=groups,
        scopes=scopes,
        cross_lens=cross_lens,
        max_sensitivity=max_sensitivity,
        expires_at=expires_at,
    )
    return self._bound(LensService).define(lens_id, contract, preferences)


def lens_expire(self, lens_id: str, *, at: Instant = None) -> LensInfo:
    """Expire a lens at ``at`` (default now): no call may wear it after (admin)."""
    return self._bound(LensService).expire(lens_id, at)


def lens_assign(self, lens_id: str, consumer: str) -> LensInfo:
    """Let ``consumer`` (``agent:<id>``, ``user:<id>``) wear the lens (admin)."""
    return self._bound(LensService).assign(lens_id, consumer, True)


def lens_unassign(self, lens_id: str, consumer: str) -> LensInfo:
    """Take the lens back from ``consumer`` (admin)."""
    return self._bound(LensService).assign(lens_id, consumer, False)


def permission_group_define(self, group: str, permissions: Sequence[str]) -> dict[str, Any]:
    """Define a permission group: capabilities a lens gains by naming the group (admin)."""
    return self._bound(LensService).define_group(group, permissions)


def lens_roster_load(self, roster: Mapping[str, Any]) -> RosterLoaded:
    """Define a roster's permission groups and lenses and make its assignments in one transaction
    (admin; ``memcore lens roster FILE`` reads one from TOML or JSON)."""
    return self._bound(LensService).load_roster(roster)


def lenses(self) -> list[LensInfo]:
    """The tenant's lenses (admin), or the lenses this caller wears."""
    return self._bound(LensService).lenses()


# -- frames ------------------------------------------------------------------------------------------


def frame_open(
    self,
    intent: str,
    goal: str,
    *,
    tags: Sequence[str] | None = None,
    next_steps: Sequence[Any] | None = None,
    lenses: Sequence[str] | None = None,
) -> Frame:
    """Open a frame for a task: one of the ten intents (explore, diagnose, plan, build, fix,
    review, decide, document, operate, learn), the goal in words, tags, next steps ({step,
    assignee, status}) and the lenses it works through."""
    return self._bound(FrameService).open(intent, goal, tags, next_steps, lenses)


def frame_update(
    self,
    frame_id: str,
    *,
    next_steps: Sequence[Any] | None = None,
    tags: Sequence[str] | None = None,
    suppress: Sequence[str] | None = None,
    unsuppress: Sequence[str] | None = None,
) -> Frame:
    """Change an open frame of yours: its next steps, its tags, the refs it suppresses (hidden
    from every view and context rendered for it)."""
    return self._bound(FrameService).update(frame_id, next_steps, tags, suppress, unsuppress)


def frame_close(self, frame_id: str, *, summary: str | None = None) -> Frame:
    """Close a frame of yours; it stays readable, as history."""
    return self._bound(FrameService).close(frame_id, summary)


def frame_get(self, frame_id: str) -> Frame:
    """A frame of yours as it stands, with its footprint (what writes under it touched) and what
    views and contexts surfaced to it."""
    return self._bound(FrameService).get(frame_id)


def frame_history(self, frame_id: str) -> list[Frame]:
    """Every version of a frame of yours, oldest first."""
    return self._bound(FrameService).history(frame_id)


def frames(self, *, status: str | None = None) -> list[Frame]:
    """Your frames (``open`` or ``closed`` only, if asked), newest first."""
    return self._bound(FrameService).mine(status)


# -- captures and decisions --------------------------------------------------------------------------


def capture(
    self,
    entity: str,
    claim: str,
    *,
    lens_id: str,
    source: str | None = None,
    confidence: float | None = None,
    timestamp: Instant = None,
    author: str | None = None,
    frame_id: str | None = None,
    actor_chain: Sequence[str] | None = None,
    key: str | None = None,
    entity_type: str | None = None,
    scope: str | Scope = Scope.USER,
) -> CaptureResult:
    """Write a capture envelope {entity, claim, source, confidence, timestamp, author, lens_id,
    frame_id, actor_chain} through the normal write path (verdicts, placement, provenance), made
    through a lens you wear with the capture capability; answered with a signed receipt of what
    was written. ``key`` (default ``claim:<entity>:<digest>``) lets a later claim supersede."""
    envelope = {
        "entity": entity,
        "claim": claim,
        "lens_id": lens_id,
        "source": source,
        "confidence": confidence,
        "timestamp": timestamp,
        "author": author,
        "frame_id": frame_id,
        "actor_chain": actor_chain,
        "key": key,
        "entity_type": entity_type,
    }
    return self._bound(CaptureService).capture(scope, **envelope)


def decide(
    self,
    decision: str,
    rationale: str,
    *,
    lens_id: str,
    inputs: Sequence[str] | None = None,
    frame_id: str | None = None,
    outcome: str | None = None,
    scope: str | Scope = Scope.USER,
) -> DecisionTrace:
    """Record a decision trace: ``act``, ``wait``, ``escalate`` or ``no_op``, why, on which
    substrate refs (``inputs``), under which frame, through a lens with the decide capability."""
    return self._bound(CaptureService).decide(decision, rationale, inputs, lens_id, frame_id, outcome, scope)


def decision_outcome(self, decision_id: str, outcome: str, *, scope: str | Scope = Scope.USER) -> DecisionTrace:
    """Add the outcome of a decision of this scope once it is known (a new version of the trace)."""
    return self._bound(CaptureService).outcome(decision_id, outcome, scope)


# -- views, contexts, events, receipts ---------------------------------------------------------------


def render(
    self, *, lenses: Sequence[str] | None = None, frame_id: str | None = None, scopes: Sequence[str] | None = None
) -> View:
    """``render(substrate, lens, frame)``: every fact, note, document, relation and decision trace
    the worn lenses admit (default: the lenses assigned to you; several union) in the scopes read,
    less the frame's suppressions, ranked for the frame; with a signed receipt."""
    return self._bound(ContextService).render(lenses, frame_id, scopes)


def get_context(
    self,
    *,
    lenses: Sequence[str] | None = None,
    frame_id: str | None = None,
    scopes: Sequence[str] | None = None,
    token_budget: int = 2000,
    query: str | None = None,
    passes: int = 3,
    include_index: bool = False,
) -> ContextAnswer:
    """Lessons and precedent for a frame (and a query) within ``token_budget``: filtered by the
    lenses and scopes (narrowest first), ranked by priority × recency × tag match × value per
    token (each item says why), then re-queried from what it surfaced (up to ``passes``);
    ``include_index`` adds a line per matching item that did not fit. Your structured profile,
    when a worn lens admits memory type ``profile``, is packed first as ``profile`` (marked
    derived, and stale when its facts changed since it was built). With a signed receipt."""
    return self._bound(ContextService).get_context(lenses, frame_id, scopes, token_budget, query, passes, include_index)


def retrieval_feedback(self, interaction_id: str, ref: str, verdict: str) -> Feedback:
    """Say whether a ref a view or a context of yours surfaced was ``useful`` or ``not_useful``; or,
    with a recall's or search's ``trace_id`` as ``interaction_id``, one of its hits (``note:<fact_id>``,
    while the search is kept). The usage fold counts it (docs/workers.md)."""
    return self._bound(ContextService).feedback(interaction_id, ref, verdict)


def events(
    self,
    *,
    since: int = 0,
    types: Sequence[str] | None = None,
    lenses: Sequence[str] | None = None,
    scopes: Sequence[str] | None = None,
    limit: int = 100,
) -> EventPage:
    """The state-change events of your scopes after ``since`` (a seq; ``next_since`` reads on),
    of ``types`` (``fact.superseded``, ``fact.*``, ...); through ``lenses``, only those they watch
    and admit, and values only where they may be seen."""
    return self._bound(EventsService).events(since, types, lenses, scopes, limit)


def receipt_keys(self) -> dict[str, str]:
    """The home's receipt public keys by key id (hex): what verifies a receipt offline (the current
    key is made here if no receipt was signed yet, so the keys can be fetched before any)."""
    keyring = self._memory.session.receipts
    if not self._memory.store.read_only:
        keyring.current()
    return keyring.public_keys()


def verify_receipt(self, receipt: Mapping[str, Any] | Receipt) -> Receipt:
    """Check a receipt's signature over every field with the home's public keys (refused typed:
    ``RECEIPT_INVALID``, ``RECEIPT_KEY_UNKNOWN``)."""
    return check_receipt(receipt, self._memory.session.receipts.verify)


OPS = (
    lens_define,
    lens_expire,
    lens_assign,
    lens_unassign,
    permission_group_define,
    lens_roster_load,
    lenses,
    frame_open,
    frame_update,
    frame_close,
    frame_get,
    frame_history,
    frames,
    capture,
    decide,
    decision_outcome,
    render,
    get_context,
    retrieval_feedback,
    events,
    receipt_keys,
    verify_receipt,
)
