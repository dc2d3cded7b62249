"""A tenant's blacklist patterns, compiled with RE2.

Python's ``re`` backtracks: a pattern such as ``(a+)+$`` takes time exponential in the value's
length, inside every write. RE2 matches in time linear in the value and has no construct that
needs backtracking (backreferences, lookaround, possessive quantifiers, atomic groups): a pattern
it cannot compile is refused when an admin configures it (``UnsafePattern``). A pattern an older
build stored that RE2 cannot compile makes the blacklist unusable: the tenant's writes are refused
(``BlacklistUnusable``) until an admin configures it again, since skipping it would drop a guard
and matching it with ``re`` would bring the backtracking back.

Matching stays what it was: ``search`` anywhere in the value's text, no flags but the pattern's
own. Python's ``\\w``, ``\\d`` and ``\\s`` are Unicode classes where RE2's are ASCII, so they are
rewritten to Unicode classes before RE2 compiles them (``docs/write-path.md`` lists what remains
different).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import re2

from ..errors import BlacklistUnusable, UnsafePattern

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print every refused pattern to stderr

# Python's Unicode classes in RE2 terms: \w is a letter, a number or "_" (str.isalnum), \d a
# decimal digit, \s str.isspace (the ASCII controls, NEL and the Unicode separators).
_WORD = r"\p{L}\p{N}_"
_SPACE = r"\t\n\v\f\r\x1c-\x1f \x85\p{Z}"
_OUTSIDE_SET = {
    "w": f"[{_WORD}]",
    "W": f"[^{_WORD}]",
    "d": r"\p{Nd}",
    "D": r"\P{Nd}",
    "s": f"[{_SPACE}]",
    "S": f"[^{_SPACE}]",
}
# Inside [...] a complement cannot join a union in RE2: \W and \S stay RE2's (ASCII) classes there.
_INSIDE_SET = {"w": _WORD, "d": r"\p{Nd}", "D": r"\P{Nd}", "s": _SPACE}


def unicode_classes(pattern: str) -> str:
    """``pattern`` with Python's Unicode ``\\w \\W \\d \\D \\s \\S`` spelled as RE2 Unicode classes."""
    out: list[str] = []
    i, n, in_set, quoted = 0, len(pattern), False, False
    while i < n:
        c = pattern[i]
        if quoted:  # RE2's \Q...\E: literal text
            quoted = not pattern.startswith(r"\E", i)
            step = 1 if quoted else 2
            out.append(pattern[i : i + step])
            i += step
        elif c == "\\" and i + 1 < n:
            letter = pattern[i + 1]
            quoted = letter == "Q"
            out.append((_INSIDE_SET if in_set else _OUTSIDE_SET).get(letter, c + letter))
            i += 2
        elif in_set and pattern.startswith("[:", i) and ":]" in pattern[i + 2 :]:
            end = pattern.index(":]", i + 2) + 2  # a POSIX class ([:alpha:]) inside a set
            out.append(pattern[i:end])
            i = end
        elif in_set:
            in_set = c != "]"
            out.append(c)
            i += 1
        elif c == "[":
            in_set = True
            start = i + 1 + (pattern.startswith("^", i + 1))
            start += pattern.startswith("]", start)  # a "]" first in a set is a member
            out.append(pattern[i:start])
            i = start
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _reason(error: re2.error) -> str:
    reason = error.args[0] if error.args else str(error)
    return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


def _compile(pattern: str) -> tuple[Any, str | None]:
    """(the compiled pattern, None) or (None, RE2's reason for refusing it)."""
    try:
        return re2.compile(unicode_classes(pattern), _OPTIONS), None
    except re2.error as translated:
        refused = translated
    try:  # name the reason in the admin's own spelling where RE2 refuses that too
        re2.compile(pattern, _OPTIONS)
    except re2.error as own:
        refused = own
    return None, _reason(refused)


@dataclass(frozen=True, slots=True)
class Blacklist:
    """The tenant's patterns, compiled once per configuration load."""

    compiled: tuple[Any, ...] = field(default=(), compare=False)  # None where RE2 refused the pattern
    refused: tuple[tuple[int, str], ...] = ()  # (index, RE2's reason)

    def first_match(self, text: str) -> int | None:
        """The index of the first pattern found in ``text``, or None. Refuses every value while
        a stored pattern is unusable (fail closed)."""
        if self.refused:
            numbers = ", ".join(f"#{number}" for number, _ in self.refused)
            raise BlacklistUnusable(
                f"this tenant's blacklist pattern(s) {numbers} were stored by an older build and RE2 cannot "
                "compile them, so the blacklist cannot check this value and nothing was written; an admin "
                "must configure the blacklist again (RE2 syntax, docs/write-path.md)",
                pattern_indexes=[number for number, _ in self.refused],
            )
        for number, regexp in enumerate(self.compiled):
            if regexp.search(text) is not None:
                return number
        return None


def compile_blacklist(patterns: Iterable[str]) -> Blacklist:
    """Compile every pattern; record (never raise for) the ones RE2 refuses."""
    compiled, refused = [], []
    for number, pattern in enumerate(patterns):
        regexp, reason = _compile(pattern)
        compiled.append(regexp)
        if reason is not None:
            refused.append((number, reason))
    return Blacklist(tuple(compiled), tuple(refused))


def require_safe(patterns: Iterable[str]) -> None:
    """Refuse (422 ``UNSAFE_PATTERN``) the first pattern RE2 cannot compile, naming its index and why."""
    for number, pattern in enumerate(patterns):
        _, reason = _compile(pattern)
        if reason is not None:
            raise UnsafePattern(
                f"blacklist pattern #{number} {pattern!r} is refused: RE2 cannot compile it ({reason}). "
                "Blacklist patterns use RE2 syntax, which matches in time linear in the value: no "
                "backreferences, lookaround, possessive quantifiers or atomic groups",
                field="blacklist",
                pattern_index=number,
                reason=reason,
            )
