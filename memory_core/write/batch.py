"""A batch write's outcome, and the keys an import writes under. Pure."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from ..model import FactVersion
from .request import SetRequest

IMPORT_PREFIX = "import:"


def import_key(text: str) -> str:
    """An imported item's key: a digest of its text, so a re-run lands on the same key."""
    return IMPORT_PREFIX + hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]


@dataclass(frozen=True, slots=True)
class BulkResult:
    written: tuple[FactVersion, ...]
    verdicts: dict[str, str]  # key -> created | superseded | restated | merged | ...
    skipped_unchanged: tuple[str, ...] = ()
    skipped_pinned: tuple[str, ...] = ()
    skipped_locked: tuple[str, ...] = ()
    skipped_blacklisted: tuple[str, ...] = ()
    rejected: tuple[str, ...] = ()  # a pinned peer refused the entry
    left_as_is: tuple[str, ...] = ()  # import: the key's newest version is not live
    peer_checked: int = 0
    peer_check_skipped: int = 0
    dry_run: bool = False

    def to_dict(self) -> dict[str, Any]:
        counts: dict[str, int] = {}
        for verdict in self.verdicts.values():
            counts[verdict] = counts.get(verdict, 0) + 1
        return {
            "rows_written": len(self.written),
            "verdicts": counts,
            "dry_run": self.dry_run,
            "skipped_unchanged": list(self.skipped_unchanged),
            "skipped_pinned": list(self.skipped_pinned),
            "skipped_locked": list(self.skipped_locked),
            "skipped_blacklisted": list(self.skipped_blacklisted),
            "rejected": list(self.rejected),
            "left_as_is": list(self.left_as_is),
            "peer_checked": self.peer_checked,
            "peer_check_skipped": self.peer_check_skipped,
        }


def import_requests(items: Sequence[Any], make_request: Callable[[int, Any], SetRequest]) -> list[SetRequest]:
    """Order import items oldest first: by valid_at (an undated item counts as now, which is what
    its request holds), then request order."""
    requests = [make_request(order, item) for order, item in enumerate(items)]
    return [r for _, r in sorted(enumerate(requests), key=lambda pair: (pair[1].valid_at, pair[0]))]
