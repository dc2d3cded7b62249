"""The sensitivity tier of a value: what a caller names, raised by what the value plainly holds.

A caller may name ``low``, ``normal`` or ``high``; detection can only raise the tier, never lower
it. A ``high`` row is stored but never embedded, indexed or compared with peers.
"""

from __future__ import annotations

import re

from ..errors import InvalidInput
from ..model import SENSITIVITIES

# A card number stands alone: a digit run inside a word (a hex digest, an id) is not one, and
# flagging it made a row holding ids "high" by chance (a profile row listing its sources' ids).
_CARD = re.compile(r"(?<!\w)(?:\d[ -]?){13,19}(?!\w)")
# Each pattern with what it cannot match without (a digit, one of some substrings): a scan runs
# only where it could match, since most values hold none of these (one alternation of them all
# cost every value a scan: docs/benchmarks.md, "Sensitivity patterns").
_GUARDED = (
    (True, ("-",), re.compile(r"\b\d{3}-\d{2}-\d{4}\b")),  # a US social security number
    (True, (), re.compile(r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b")),  # an IBAN
    (False, (":", "="), re.compile(r"(?i:\b(?:password|passwd|passcode|api[_ -]?key|secret|token)\b\s*[:=]\s*\S+)")),
    (False, ("-", "_"), re.compile(r"\b(?:sk|pk|ghp|xox[bp])[-_][A-Za-z0-9_-]{16,}\b")),  # provider secret keys
    (False, ("-----BEGIN ",), re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----")),
)
# Every needle above holds one of these characters: a value without any can match only the
# patterns that need no needle (one regex search instead of four substring checks).
_ANY_NEEDLE = re.compile(r"[-:=_]")
_NEEDLELESS = tuple(guard for guard in _GUARDED if not guard[1])


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
    # \d matches other scripts' digits too: only ASCII text is counted, the rest is scanned whole.
    digits = sum(map(text.count, "0123456789")) if text.isascii() else None
    if digits is None or digits >= 13:  # a card number has 13 to 19 digits
        for match in _CARD.finditer(text):
            found = re.sub(r"\D", "", match.group())
            if 13 <= len(found) <= 19 and _luhn(found):
                return "high"
    guarded = _GUARDED if digits is None or _ANY_NEEDLE.search(text) else _NEEDLELESS
    for needs_digit, needles, pattern in guarded:
        if digits is None or ((digits or not needs_digit) and (not needles or any(n in text for n in needles))):
            if pattern.search(text):
                return "high"
    return "normal"


def tier(named: str | None, text: str) -> str:
    """The stored tier: the higher of the named one (default normal) and the detected one."""
    if named is not None and named not in SENSITIVITIES:
        raise InvalidInput(f"sensitivity must be one of {', '.join(SENSITIVITIES)}, got {named!r}", field="sensitivity")
    detected = detect(text)
    chosen = named or "normal"
    return max(chosen, detected, key=SENSITIVITIES.index)
