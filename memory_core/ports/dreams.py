"""What Dreams keeps and reads beside the substrate: the approval queue of its proposals (one
version per status change) and the two window reads a pass needs that the substrate's own port
does not answer by time."""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from ..dreams import DreamProposal
from ..identity import Namespace


class DreamsStore(Protocol):
    def record(self, proposal: DreamProposal) -> None:
        """Keep a new version of a proposal (a new proposal is its version 1)."""
        ...

    def proposals(self, namespace: Namespace, status: str | None = None) -> list[DreamProposal]:
        """The newest version of each proposal of the namespace (of that status), oldest first."""
        ...

    def proposal(self, tenant: str, proposal_id: str) -> DreamProposal | None: ...

    def known(self, namespace: Namespace) -> set[str]:
        """The dedup keys of every proposal ever made in the namespace, whatever its status."""
        ...

    def pending_namespaces(self) -> list[Namespace]:
        """The namespaces with a pending proposal (what a reviewer picks from)."""
        ...

    def first_event_seq(self, namespace: Namespace, since: datetime) -> int:
        """The seq to read the namespace's events after so as to start at ``since``."""
        ...

    def surfaced_since(self, tenant: str, since: datetime) -> set[str]:
        """The refs a render or a context of the tenant disclosed since ``since`` (recalled)."""
        ...
