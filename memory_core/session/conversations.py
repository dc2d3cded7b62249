"""What the conversations run sessions write look like to the next write and the next search:
the last notes each session said in each namespace (a new note's index context costs no read of
the log, ``write.conversation``), and who speaks in a namespace's conversations (the subjects of
its turns: a search leaves their names out of the meaning it embeds, ``retrieval.priors``).

Every method but ``speakers``' read of a loaded namespace is called under the store's lock: a
tail is read by a write's read-decide-commit and moved on by the commit that follows, so it is
always what the log would answer.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, ContextManager, Iterable, Sequence

from ..identity import Namespace
from ..model import FactVersion, Kind
from ..texts import value_text
from ..write.conversation import TAIL_TURNS, Said, followed, opens_turn

# The log's first rows of a session's newest notes; more than the context reads, since some may
# not be served (high, redacted, of a type the index leaves out).
LoadNotes = Callable[[Namespace, str, int], Sequence[FactVersion]]
LoadNoteStates = Callable[[Namespace], Iterable[FactVersion]]  # the latest state of each session note
TAILS_KEPT = 4096  # sessions whose tail is held; an older one is read from the log again


class Conversations:
    def __init__(self, load: LoadNotes, note_states: LoadNoteStates, indexable: Callable[[FactVersion], bool]) -> None:
        self._load = load
        self._note_states = note_states
        self._indexable = indexable
        self._tails: OrderedDict[tuple[Namespace, str], tuple[Said, ...]] = OrderedDict()
        self._speakers: dict[Namespace, frozenset[str]] = {}

    def speakers(self, namespace: Namespace, locked: Callable[[], ContextManager[None]]) -> frozenset[str]:
        """The subjects of the namespace's turns the index serves. Read without the store's lock once loaded (a
        commit replaces the set whole); ``locked`` is taken to load it."""
        found = self._speakers.get(namespace)
        if found is None:
            with locked():
                found = self._speakers.get(namespace)
                if found is None:
                    served = (s for s in self._note_states(namespace) if s.subject and self._indexable(s))
                    found = self._speakers[namespace] = frozenset(s.subject for s in served)
        return found

    def tail(self, namespace: Namespace, session: str) -> tuple[Said, ...]:
        """The notes the next note of ``session`` follows, oldest first."""
        key = (namespace, session)
        found = self._tails.get(key)
        if found is None:
            rows = self._load(namespace, session, TAIL_TURNS * 2)
            found = self._keep(key, followed((), self._said(rows)))
        else:
            self._tails.move_to_end(key)
        return found

    def noted(self, rows: Iterable[FactVersion]) -> None:
        """A commit's rows: the new notes of a session whose tail is held move it on. Any other
        row of a session's note (deleted, restated high, ...) sends its scope's speakers back to
        the log; a tail is checked against its notes' states when it is read."""
        for row in rows:
            if row.kind is not Kind.NOTE or row.provenance.session is None:
                continue
            namespace = Namespace(row.tenant, row.scope, row.owner_id)
            known = self._speakers.get(namespace)
            if not (opens_turn(row) and self._indexable(row)):
                self._speakers.pop(namespace, None)
                continue
            if known is not None and row.subject and row.subject not in known:
                self._speakers[namespace] = known | {row.subject}
            key = (namespace, row.provenance.session)
            held = self._tails.get(key)
            if held is not None:
                self._tails[key] = followed(held, self._said([row]))

    def forget(self) -> None:
        """Drop what is held (after a batch, a redaction): the next reads go to the log."""
        self._tails.clear()
        self._speakers.clear()

    def _said(self, rows: Iterable[FactVersion]) -> list[Said]:
        return [Said(r.fact_id, r.key, value_text(r.value)) for r in rows if self._indexable(r)]

    def _keep(self, key: tuple[Namespace, str], tail: tuple[Said, ...]) -> tuple[Said, ...]:
        self._tails[key] = tail
        if len(self._tails) > TAILS_KEPT:
            self._tails.popitem(last=False)
        return tail
