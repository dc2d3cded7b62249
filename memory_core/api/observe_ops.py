"""The Memory tool's observation-capture ops (``MemoryTool`` lists each in its class body), and the
operator's extraction worker over every crystallized session of a home (``Memory.observe_extract``,
off unless called: nothing runs it on a schedule). ``docs/extraction.md``, "Observation capture"."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from ..extraction.model import Extractor
from ..identity import Scope
from ..services.observe import ObserveService, ObserveWorker

if TYPE_CHECKING:
    from .memory import Memory


def observe_record(
    self, session_id: str, observations: Sequence[Any], *, scope: str | Scope = Scope.USER
) -> dict[str, Any]:
    """Keep tool-trace observations of a session as episodic rows (``observe:<session>:<id>``), in
    one transaction: each {tool, input?, output? | result?, error?, at?}, or a message an agent's
    hooks saw, {role: user | assistant, content, at?}. A crystallized session is refused."""
    return self._bound(ObserveService).record(session_id, observations, scope=scope)


def observe_crystallize(self, session_id: str, *, scope: str | Scope = Scope.USER) -> dict[str, Any]:
    """Mark the session ready for the observation extraction (``changed`` False when it already
    was: a second call changes nothing). A session with no observations here is NOT_FOUND."""
    return self._bound(ObserveService).crystallize(session_id, scope=scope)


def observe_status(self, session_id: str, *, scope: str | Scope = Scope.USER) -> dict[str, Any]:
    """The session's state: open, ready, running, done (with the fact keys its replay wrote) or failed."""
    return self._bound(ObserveService).status(session_id, scope=scope)


def observe_extract(
    self: Memory,
    *,
    extractor: Extractor | None = None,
    worker: str | None = None,
    limit: int = 8,
    lease_s: float = 300.0,
) -> dict[str, Any]:
    """Replay up to ``limit`` crystallized sessions through ``set_from_messages`` with
    ``extractor`` (default: the home's, offline rules unless an operator set a model), each once,
    as the identity that crystallized it. Counts by outcome, the facts written, the sessions."""
    return ObserveWorker(self.session).run(
        worker=worker or f"worker-{os.getpid()}", limit=limit, lease_s=lease_s, extractor=extractor
    )
