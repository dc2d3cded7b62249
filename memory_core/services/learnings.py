"""The learnings queue: rules a user states about the agent, filed by extraction's write step as
candidates with their supporters (never written as memories), read by an admin of the tenant (a
user reads the candidates they support), and accepted or rejected by a reviewer. An erasure of a
user takes their supporter rows with their scope; ``settle_unsupported`` then deletes the pending
candidates no one supports any more and blanks the rule of the decided ones, keeping their
decision (``docs/extraction.md``, "Learnings")."""

from __future__ import annotations

import dataclasses
from typing import Sequence

from ..errors import AdminRequired, InvalidInput, NotFound
from ..extraction.learnings import (
    PENDING,
    STATUSES,
    Learning,
    Supporter,
    after_last_supporter,
    decide,
    reword,
    rule_digest,
    supporter_owner,
)
from ..extraction.model import Extracted
from ..identity import Namespace, Scope
from ..session import RunService, Session
from ..session.holds import refuse_held

ALL = "all"


class LearningsService(RunService):
    def _candidate_owner(self) -> tuple[str, str]:
        """The namespace a rule said in this run is a candidate of: the agent it was said to (the
        tenant's own when the run names no agent)."""
        ident = self.identity
        return ("agent", ident.agent) if ident.agent else ("tenant", ident.tenant)

    def file(self, facts: Sequence[Extracted]) -> list[str]:
        """File each rule about the agent as a candidate (or as one more supporter of the pending,
        accepted or rejected candidate with the same words) and answer their ids."""
        session, ident = self.session, self.identity
        session.refuse_read_only("filing a learning")
        scope, owner = self._candidate_owner()
        mine = supporter_owner(ident.tenant, ident.user, ident.agent)
        refuse_held(session.store, [Namespace(ident.tenant, Scope(scope), owner), Namespace(ident.tenant, *_ns(mine))])
        store, ids = session.store.learnings, []
        with session.locked():
            now = session.clock.now()
            for fact in facts:
                words = fact.quote or fact.value  # the user's own words: what a supporter quotes
                digest = rule_digest(words)
                found = store.find(ident.tenant, scope, owner, digest)
                if found is None:
                    learning_id = "lrn-" + session.new_id()[:16]
                    found = Learning(learning_id, 1, ident.tenant, scope, owner, words, digest, PENDING, now, now)
                    store.record(found)
                elif found.erased:  # said again after an erasure blanked it: its words come back, its decision stays
                    found = dataclasses.replace(found, version=found.version + 1, rule=words, recorded_at=now)
                    store.record(found)
                supporter = Supporter(
                    found.learning_id,
                    ident.tenant,
                    ident.user,
                    ident.agent,
                    ident.session,
                    ident.run,
                    fact.turn_id,
                    fact.quote,
                    now,
                )
                store.add_supporter(supporter)
                ids.append(found.learning_id)
        return ids

    def learnings(self, status: str) -> list[Learning]:
        if status != ALL and status not in STATUSES:
            raise InvalidInput(f"status must be one of {', '.join((*STATUSES, ALL))}", field="status")
        ident = self.identity
        wanted = None if status == ALL else status
        if ident.admin:
            return self.session.store.learnings.learnings(ident.tenant, wanted)
        # Anyone else sees the candidates they support, with only their own words.
        mine = supporter_owner(ident.tenant, ident.user, ident.agent)
        return self.session.store.learnings.learnings(ident.tenant, wanted, mine)

    def decide(self, learning_id: str, accept: bool) -> Learning:
        ident, session = self.identity, self.session
        if not ident.admin:
            raise AdminRequired("a learning is accepted or rejected by an admin of the tenant")
        if not isinstance(accept, bool):
            raise InvalidInput("accept must be true or false", field="accept")
        session.refuse_read_only("learning_decide")
        store = session.store.learnings
        with session.locked():
            found = store.learning(ident.tenant, learning_id)
            if found is None:  # another tenant's id answers the same: missing
                raise NotFound(f"no learning {learning_id}", learning_id=learning_id)
            decided = decide(found, accept=accept, actor=ident.actor, at=session.clock.now())
            if decided is None:
                return found
            store.record(decided)
            return dataclasses.replace(decided, supporters=found.supporters)


def _ns(owner: tuple[str, str]) -> tuple[Scope, str]:
    return Scope(owner[0]), owner[1]


def settle_unsupported(session: Session, tenant: str) -> int:
    """After an erasure deleted supporter rows: delete each pending candidate left with no
    supporter, and put each decided one's decision on a new version with its rule blanked (so a
    rejected rule never comes back as pending). Bounded to the candidates read here: one decided
    or supported meanwhile is left as it is (the census finds it if it still needs settling)."""
    store = session.store.learnings
    now = session.clock.now()
    deleted, rewritten = [], []
    for learning in store.unsupported(tenant):
        after = after_last_supporter(learning, now)
        (deleted if after is None else rewritten).append(learning if after is None else after)
    for learning in store.learnings(tenant, None):
        reworded = reword(learning, now)  # its words were the erased user's: a remaining supporter's instead
        if reworded is not None:
            rewritten.append(reworded)
    return store.settle(tenant, deleted, rewritten)
