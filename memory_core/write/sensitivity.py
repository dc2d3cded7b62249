"""The sensitivity tier of a value: what a caller names, raised by what the value plainly holds.

A caller may name ``low``, ``normal`` or ``high``; detection can only raise the tier, never lower
it. A ``high`` row is stored but never embedded, indexed or compared with peers.
"""
from __future__ import annotations

import re

from ..errors import InvalidInput
from ..model import SENSITIVITIES

_CARD = re.compile(r"(?<!\d)(?:\d[ -]?){13,19}(?!\d)")
# One alternation, so a value is scanned once.
_PATTERN = re.compile("|".join((
    r"\b\d{3}-\d{2}-\d{4}\b",                                     # a US social security number
    r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b",                   # an IBAN
    r"(?i:\b(?:password|passwd|passcode|api[_ -]?key|secret|token)\b\s*[:=]\s*\S+)",
    r"\b(?:sk|pk|ghp|xox[bp])[-_][A-Za-z0-9_-]{16,}\b",           # provider secret keys
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
)))


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


def detect(text: str) -> str:
    """``high`` when the text holds a card number, a national id, an IBAN or a secret; else ``normal``."""
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return "high"
    return "high" if _PATTERN.search(text) else "normal"


def tier(named: str | None, text: str) -> str:
    """The stored tier: the higher of the named one (default normal) and the detected one."""
    if named is not None and named not in SENSITIVITIES:
        raise InvalidInput(f"sensitivity must be one of {', '.join(SENSITIVITIES)}, got {named!r}",
                           field="sensitivity")
    detected = detect(text)
    chosen = named or "normal"
    return max(chosen, detected, key=SENSITIVITIES.index)
