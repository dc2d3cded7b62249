"""remember's ports: the substrate's own tables (events, lenses, frames, decision traces,
interaction records, receipts), the receipt keyring, and the token counter a context budget is
measured with. The substrate's versioned records are written inside a ``WriteBatch`` (the write's
transaction, with its audit row and its event); interaction records and receipts are records
kept after the answer they describe."""

from __future__ import annotations

from typing import Callable, Protocol, Sequence, Union

from ..identity import Namespace
from ..substrate.decisions import DecisionTrace, Interaction
from ..substrate.events import StateChange
from ..substrate.frames import Frame
from ..substrate.lenses import Assignment, Capability, Lens, PermissionGroup
from ..substrate.receipts import Receipt

# What a write may append to the substrate's versioned tables, in its transaction.
SubstrateRecord = Union[Lens, Assignment, PermissionGroup, Frame, DecisionTrace]


class SubstrateStore(Protocol):
    """Reads of the substrate's tables (every read names its tenant), and the records kept after
    an answer."""

    def lenses(self, tenant: str) -> list[Lens]:
        """The newest version of every lens of the tenant, by id."""
        ...

    def assignments(self, tenant: str, consumer: str | None = None) -> list[Assignment]:
        """The newest line of the assignment log per lens and consumer (``assigned`` says whether
        it is in force)."""
        ...

    def permission_groups(self, tenant: str) -> dict[str, frozenset[Capability]]: ...

    def group_versions(self, tenant: str) -> dict[str, int]:
        """Each permission group's newest version number."""
        ...

    def frame_versions(self, tenant: str, frame_id: str) -> list[Frame]:
        """Every version of the frame, oldest first (empty: no such frame in this tenant)."""
        ...

    def frames_by_id(self, tenant: str, frame_ids: Sequence[str]) -> list[Frame]:
        """The newest version of each of these frames of the tenant (any consumer's)."""
        ...

    def frames(self, tenant: str, consumer: str, status: str | None = None) -> list[Frame]:
        """The newest version of each of the consumer's frames, newest first."""
        ...

    def decisions(self, namespaces: Sequence[Namespace]) -> list[DecisionTrace]:
        """The newest version of every decision trace kept in the namespaces."""
        ...

    def decision(self, tenant: str, decision_id: str) -> DecisionTrace | None: ...

    def events(
        self,
        namespaces: Sequence[Namespace],
        since: int,
        limit: int,
        types: Sequence[str] = (),
    ) -> list[StateChange]:
        """Events of the namespaces after seq ``since``, in order, at most ``limit`` (``types``:
        exact types or ``family.*`` patterns; none: every type)."""
        ...

    def last_event_seq(self) -> int: ...

    def footprint(self, tenant: str, frame_id: str) -> list[str]:
        """The refs the writes made under the frame touched, in the order they were touched."""
        ...

    def surfaced(self, tenant: str, frame_id: str) -> list[str]:
        """The refs views and contexts disclosed under the frame, in the order they were first shown."""
        ...

    def interaction(self, tenant: str, interaction_id: str) -> Interaction | None: ...

    def record_answer(self, interaction: Interaction, receipt: Receipt | None) -> None:
        """Keep an interaction record and the receipt it was answered with, in one transaction."""
        ...


class ReceiptKeyring(Protocol):
    """The home's receipt signing keys: one current key signs; every key that ever signed keeps its
    public half, so old receipts still verify after a rotation (a retired key's private half is
    destroyed)."""

    issuer: str  # the home, as its receipts name it

    def current(self) -> str:
        """The id of the key that signs now (made on first use)."""
        ...

    def sign(self, message_for: Callable[[str], bytes]) -> tuple[str, str]:
        """(key id, signature hex) of the message ``message_for(key id)`` builds for the current
        key (a receipt names the key that signs it), signed under that key."""
        ...

    def verify(self, key_id: str, message: bytes, signature: str) -> bool | None:
        """Does the signature verify under key ``key_id``? None: no key of that id."""
        ...

    def public_keys(self) -> dict[str, str]:
        """Every key id with its raw Ed25519 public key, hex."""
        ...

    def rotate(self) -> str:
        """Make a new current key and retire the old one; answers the new key's id."""
        ...


class TokenCounter(Protocol):
    """How long a text is in tokens, as a context's budget counts it."""

    name: str

    def count(self, texts: Sequence[str]) -> list[int]: ...


__all__ = ["ReceiptKeyring", "SubstrateRecord", "SubstrateStore", "TokenCounter"]
