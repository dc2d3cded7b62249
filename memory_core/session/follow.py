"""Following a shared authority: what one process does about the writes other processes make.

An embedded home has one writer, so what a process keeps in memory (tenant settings, the peer
vectors a verdict compares with, conversation tails, graph entity names, the retrieval index)
changes only by its own commits. Over a PostgreSQL authority several service replicas write, and
each keeps those things per process. ``AuthorityFollower`` watches the authority's change feed
(the audit chain's newest seq): when it moved past what this process wrote, the rows written
elsewhere are replayed into this process's index and the caches of the namespaces they touched
are dropped. It runs when a write takes the lock (so a write decides on fresh state), when a
search flushes the index (so a search sees other replicas' writes), and from the service's
upkeep thread.

Sequence numbers are handed out under the authority's write lock, in commit order, so "after
the position I saw" never skips a transaction that was still open when I looked.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from typing import TYPE_CHECKING, Callable, ContextManager, Iterator, Sequence

from ..identity import Namespace, Scope
from ..ports import ChangeFeed, VersionLog

if TYPE_CHECKING:
    from .core import Session

# (tenant, scope, owner_id, op) of each audit row written elsewhere, and the facts they changed.
OnForeign = Callable[[list[tuple[str, str, str, str]], Sequence[str]], None]


class AuthorityFollower:
    def __init__(self, feed: ChangeFeed, versions: VersionLog, on_foreign: OnForeign) -> None:
        self._feed = feed
        self._versions = versions
        self._on_foreign = on_foreign
        self._audit_seen = feed.position()
        self._seq_seen = versions.last_seq
        self.replayed = 0  # facts written elsewhere that this process caught up with

    def sync(self) -> int:
        """Catch up with what other processes wrote; answers how many facts they changed. Cheap
        when nothing did: one read, no lock."""
        if self._feed.position() == self._audit_seen:
            return 0
        with self._versions.locked():
            position = self._feed.position()  # under the lock: no one commits until we let go
            if position == self._audit_seen:
                return 0
            changes = self._feed.changed_since(self._audit_seen)
            last = self._versions.last_seq
            facts = self._versions.rows_since(self._seq_seen, last)
            self._audit_seen, self._seq_seen = position, last
            self._on_foreign(changes, facts)
            self.replayed += len(facts)
            return len(facts)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """The store's lock, caught up with the other writers first."""
        with self._versions.locked():
            self.sync()
            yield

    def behind(self) -> int:
        """Audit rows other processes wrote that this one has not caught up with yet (0: none)."""
        return max(0, self._feed.position() - self._audit_seen)

    def committed_here(self) -> None:
        """After this process's own commit, under the lock it committed under: everything up to
        now is known (the caller caught up before it wrote, and no one else wrote since)."""
        self._audit_seen = self._feed.position()
        self._seq_seen = self._versions.last_seq


def follow_authority(session: "Session") -> AuthorityFollower | None:
    """The session's follower, when its store is one other processes write too."""
    feed = session.store.feed
    if feed is None:
        return None

    def on_foreign(changes: list[tuple[str, str, str, str]], facts: Sequence[str]) -> None:
        for tenant in {c[0] for c in changes}:
            session.forget_config(tenant)  # a settings change elsewhere, or a write: read anew
        if session._peers is not None:
            for tenant, scope, owner_id, _ in changes:
                if scope in SCOPES and owner_id != "*":
                    session._peers.forget(Namespace(tenant, Scope(scope), owner_id))
        session.conversations.forget()
        session.entities.forget()
        edited = [c for c in changes if c[3] in EDITS_IN_PLACE]
        if edited:  # a kept page or trace must not show what was redacted or erased elsewhere
            session.searches.forget()
        index = session.built_index
        if index is None:
            return
        index.replay(facts)
        for tenant, scope, owner_id, op in edited:
            if op == "erase":  # its rows are gone from the authority: the index drops what it no longer holds
                index.repair()
            elif scope in SCOPES and owner_id != "*":
                # A redaction edits rows in place (its own and the notes that quoted it), keeping
                # their versions: every fact of the namespace is written again, as it stands now.
                ns = Namespace(tenant, Scope(scope), owner_id)
                index.replay([s.fact_id for states in session.versions.namespace_states(ns).values() for s in states])

    return AuthorityFollower(feed, session.versions, on_foreign)


def index_opening(session: "Session") -> ContextManager[None]:
    """What the retrieval index is opened under: over a shared authority, the store's lock (taken
    before the session's ``_building``, the order a commit that opens the index takes them in).
    The index reads how far the log is as it opens (its horizon); a row another replica commits
    after that must find the index open, or the follower would have nothing to replay it into."""
    return session.versions.locked() if session.follower is not None else nullcontext()


SCOPES = frozenset(s.value for s in Scope)
EDITS_IN_PLACE = frozenset({"redact", "erase"})  # audit ops that change rows without a new version
