"""Sensitivity detection: the guarded scans answer exactly what one scan of every pattern answers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.write.sensitivity import _luhn, detect

pytestmark = pytest.mark.faces  # the behaviour suite: in-process and through the service

# The detector as first written: every pattern in one alternation, run on every value.
_REFERENCE = re.compile(
    "|".join(
        (
            r"\b\d{3}-\d{2}-\d{4}\b",
            r"\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){3,7}\b",
            r"(?i:\b(?:password|passwd|passcode|api[_ -]?key|secret|token)\b\s*[:=]\s*\S+)",
            r"\b(?:sk|pk|ghp|xox[bp])[-_][A-Za-z0-9_-]{16,}\b",
            r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
        )
    )
)
_CARD = re.compile(r"(?<!\w)(?:\d[ -]?){13,19}(?!\w)")


def reference(text: str) -> str:
    for match in _CARD.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and _luhn(digits):
            return "high"
    return "high" if _REFERENCE.search(text) else "normal"


@pytest.mark.parametrize(
    "text, tier",
    [
        ("card 4111 1111 1111 1111", "high"),
        ("card 4111 1111 1111 1112", "normal"),
        ("ssn 123-45-6789", "high"),
        ("iban DE89 3704 0044 0532 0130 00", "high"),
        ("my Password: hunter2", "high"),
        ("api-key = abc", "high"),
        ("key sk-abcdefghijklmnopqrstu", "high"),
        ("-----BEGIN RSA PRIVATE KEY-----", "high"),
        ("card ٤١١١ ١١١١ ١١١١ ١١١١", "high"),
        ("Dana studied music in Leeds (note 387926)", "normal"),
        ("prefers dark mode", "normal"),
        ("digest f4111111111111111a", "normal"),  # a digit run inside a hex id is no card number
        ("card:4111111111111111.", "high"),
    ],
)
def test_known_values(text, tier):
    assert detect(text) == tier == reference(text)


_PIECES = st.sampled_from(
    [
        "4111 1111 1111 1111",
        "123-45-6789",
        "DE89 3704 0044 0532 0130 00",
        "password",
        "token",
        ":",
        "=",
        " ",
        "-",
        "_",
        "sk",
        "ghp",
        "xoxb",
        "-----BEGIN ",
        "PRIVATE KEY-----",
        "١٢٣",
        "a",
        "Z",
        "0",
        "9",
        "abcdefghijklmnopq",
    ]
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.one_of(_PIECES, st.text(max_size=6)), max_size=12).map("".join))
def test_guarded_scans_agree_with_one_full_scan(text):
    assert detect(text) == reference(text)
