"""The harvest bridge: what context distillation evicts is banked for memory, never lost.

A run opts in with ``harvest_to_memory``. At each distillation boundary (a compaction cut, a
recap boundary, a stateful boundary) the evicted span is banked on the consolidation queue as
it is: no model call on the run's path, so harvesting adds no latency and no failure mode to
the run. The consolidator (``run_harvest_batch``, run by the queue worker) extracts whole
batches, places what it can by the tenant's ontology, and writes durable facts.

A batch is the spans of one user and session: the spans a worker claims together are extracted
as one transcript, read after the session's spans banked before them (``harvest_batch``), so a
pronoun in a late span finds the name an early one gave; facts come only from the claimed spans.

Two decisions from the design: banking never fails the run (a full queue or an unreachable
store is an event, and the run goes on), and a misconfiguration (no store, no user id, no user
scope grant) is reported once, as one error event, not once per span.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence

from ..errors import InvalidInput, MemcoreError
from ..identity import Identity, Scope, identity_fields, identity_from
from ..inputs import integer, known_options, mapping, text
from ..values import canonical_json
from .model import Turn, parse_messages
from .pipeline import DEFAULT_STEPS

BOUNDARIES = ("compaction", "recap", "stateful")
DEFAULT_CAPACITY = 256  # unfinished harvest jobs a user scope may hold before spans are dropped
HARVEST_FIELDS = ("boundary", "generation", "identity", "messages", "session")
CONTEXT_SPANS = 8  # earlier spans of the session a batch is read after, at most...
CONTEXT_CHARS = 3000  # ...and of their turns, the latest that fit in about half an extraction window


def check_harvest_payload(payload: Any) -> dict[str, Any]:
    """A banked span as the consolidator reads it, or a typed refusal: a malformed span is refused
    when it is banked, never left on the queue to fail the worker that claims it."""
    mapping(payload, "payload")
    known_options(payload, HARVEST_FIELDS, "a harvest payload")
    missing = [name for name in HARVEST_FIELDS if name not in payload]
    if missing:
        raise InvalidInput(f"a harvest payload needs {', '.join(missing)}", field="payload")
    if payload["boundary"] not in BOUNDARIES:
        raise InvalidInput(f"boundary must be one of {', '.join(BOUNDARIES)}", field="boundary")
    integer(payload["generation"], "generation", low=0, high=2**31)
    session = text(payload["session"], "session")
    parse_messages(payload["messages"], session=session)
    try:
        identity_from(mapping(payload["identity"], "identity"))
    except MemcoreError:
        raise
    except (KeyError, TypeError):
        raise InvalidInput("the payload's identity needs a tenant and identity fields", field="identity") from None
    canonical_json(payload, levels_above=3, max_chars=None)  # the queue keeps JSON
    return dict(payload)


class HarvestBank(Protocol):
    """Where banked spans go (a ``Memory`` is one): the consolidation queue of the run's user."""

    def bank_harvest(self, identity: Identity, payload: dict[str, Any], *, capacity: int) -> bool:
        """Queue one span for the consolidator; False when the user's queue is full."""
        ...


@dataclass
class HarvestBridge:
    memory: HarvestBank | None
    identity: Identity | None
    harvest_to_memory: bool = False
    capacity: int = DEFAULT_CAPACITY
    on_event: Callable[[dict[str, Any]], None] = lambda event: None
    events: list[dict[str, Any]] = field(default_factory=list)
    banked: int = 0
    dropped: int = 0
    _misconfigured: str | None = field(default=None, init=False)
    _checked: bool = field(default=False, init=False)

    def _emit(self, event: dict[str, Any]) -> None:
        self.events.append(event)
        try:
            self.on_event(event)
        except Exception:  # noqa: BLE001 - an observer's failure is not the run's
            pass

    def _problem(self) -> str | None:
        if self.memory is None:
            return "harvest_to_memory is on but the run has no memory store"
        if self.identity is None or not self.identity.user:
            return "harvest_to_memory is on but the run identity has no user id"
        if not self.identity.admin and Scope.USER not in self.identity.memory_scopes:
            return "harvest_to_memory is on but the run lacks the memory_scopes grant 'user'"
        return None

    def on_boundary(
        self, boundary: str, evicted: Sequence[dict[str, Any]], *, generation: int, session: str | None = None
    ) -> bool:
        """Bank an evicted span. Returns whether it was banked; never raises."""
        if not self.harvest_to_memory or not evicted:
            return False
        if not self._checked:
            self._checked, self._misconfigured = True, self._problem()
            if self._misconfigured:
                self._emit({"type": "error", "code": "HARVEST_MISCONFIGURED", "message": self._misconfigured})
        if self._misconfigured:
            self.dropped += 1
            return False
        try:
            if boundary not in BOUNDARIES:
                raise ValueError(f"unknown distillation boundary {boundary!r}")
            identity = self.identity
            session = session or identity.session or "session"
            parse_messages(evicted, session=session)
            banked = self.memory.bank_harvest(
                identity,
                {
                    "messages": list(evicted),
                    "boundary": boundary,
                    "generation": generation,
                    "session": session,
                    "identity": identity_fields(identity),
                },
                capacity=self.capacity,
            )
        except Exception as exc:  # noqa: BLE001 - the store is gone, the span is malformed...: the run goes on
            self.dropped += 1
            self._emit(
                {
                    "type": "warning",
                    "code": "HARVEST_BANK_FAILED",
                    "boundary": boundary,
                    "generation": generation,
                    "message": f"{type(exc).__name__}: {exc}"[:300],
                }
            )
            return False
        if not banked:
            self.dropped += 1
            self._emit(
                {
                    "type": "warning",
                    "code": "HARVEST_QUEUE_FULL",
                    "boundary": boundary,
                    "generation": generation,
                    "message": f"the harvest queue holds {self.capacity} unfinished "
                    "jobs for this user; the span was not banked",
                }
            )
            return False
        self.banked += 1
        return True


CONSOLIDATION_STEPS = tuple(s for s in DEFAULT_STEPS if s != "bulk_write") + ("place_facts", "bulk_write")


@dataclass(frozen=True, slots=True)
class HarvestBatch:
    """What the consolidator extracts at once: the turns of the claimed spans (generation order),
    each turn's generation, and the earlier turns of the session they are read after."""

    session: str
    turns: tuple[Turn, ...]
    generations: dict[str, int]
    context: tuple[Turn, ...]


def _span_turns(spans: Iterable[dict[str, Any]], session: str) -> tuple[tuple[Turn, ...], dict[str, int]]:
    # A turn without an id is named by its span's generation and place in it, so the turns of
    # two spans of a session never share an id (a context turn is told from the batch's by it).
    messages, generations = [], {}
    for span in spans:
        for i, message in enumerate(span["messages"]):
            named = {**message, "id": message.get("id") or f"{session}:g{span['generation']}:{i}"}
            messages.append(named)
            generations[str(named["id"])] = span["generation"]
    return (parse_messages(messages, session=session) if messages else ()), generations


def harvest_batch(
    spans: Sequence[dict[str, Any]], earlier: Sequence[dict[str, Any]], *, context_chars: int = CONTEXT_CHARS
) -> HarvestBatch:
    """One batch from checked harvest payloads of one session: ``spans`` to extract, ``earlier``
    (banked before them, done or not) to read first, cut to the latest ``context_chars``."""
    order = sorted(spans, key=lambda span: span["generation"])
    session = order[0]["session"]
    turns, generations = _span_turns(order, session)
    before, _ = _span_turns(sorted(earlier, key=lambda span: span["generation"]), session)
    kept, size = [], 0
    for turn in reversed(before):
        size += len(turn.content)
        if size > context_chars:
            break
        kept.append(turn)
    return HarvestBatch(session, turns, generations, tuple(reversed(kept)))
