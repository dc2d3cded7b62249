"""Resolving a mention to the entity it names, from the text an extractor is given.

Deliberately simple and deterministic (the rule-based extractor's resolver, generalised): the
candidates are the capitalised names in the text, most recent first; a personal pronoun (he,
she, him, her, his) prefers a name of two words or more; anything else takes the most recent
name. What matters for the experiment is *what text the resolver is given*: a span alone, or the
whole batch the span came from.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

STOP = frozenset(
    """i you he she it they we me him her us them my your his its our their this that these those the a
an can could would will shall should please play show set remind what when where who whom how why is are was were do
does did okay ok yes no sure thanks thank hey hi hello let tell find search add turn put get give got go make
take open start stop call send read check look listen watch any some all there here and or but so then now also just
also not if which one ones oh well great good nice cool alright right fine next previous last first""".split()
)
PERSONAL = frozenset({"he", "she", "him", "her", "his", "hers", "himself", "herself"})
SPEAKERS = frozenset({"i", "me", "my", "mine", "myself", "you", "your", "yours", "yourself", "we", "us", "our"})
_TOKEN = re.compile(r"[A-Za-z0-9][\w'’.-]*")


@dataclass(frozen=True, slots=True)
class Candidate:
    text: str
    position: int  # where it ends, in the text it was read from (later = more recent)


def is_named(text: str) -> bool:
    """Does a mention name something (a capitalised name), rather than point at it?"""
    words = _TOKEN.findall(text)
    return bool(words) and any(w[0].isupper() and w.casefold() not in STOP for w in words)


def candidates(text: str) -> list[Candidate]:
    """Runs of capitalised words that are not function words, in order."""
    out: list[Candidate] = []
    run: list[str] = []
    end = 0
    for m in _TOKEN.finditer(text):
        word = m.group(0)
        if word[0].isupper() and word.casefold() not in STOP:
            run.append(word)
            end = m.end()
        else:
            if run:
                out.append(Candidate(" ".join(run), end))
            run = []
    if run:
        out.append(Candidate(" ".join(run), end))
    return out


def resolve(context: str, mention: str) -> str | None:
    """The entity ``mention`` names, read from ``context`` (the text before the mention)."""
    found = candidates(context)
    if not found:
        return None
    head = mention.strip().split()[0].casefold() if mention.strip() else ""
    if head in PERSONAL:
        people = [c for c in found if len(c.text.split()) >= 2]
        if people:
            return people[-1].text
    return found[-1].text


def matches(resolved: str | None, gold: str) -> bool:
    if not resolved:
        return False
    a, b = resolved.casefold().strip(" '\""), gold.casefold().strip(" '\"")
    return a == b or (len(a) > 2 and len(b) > 2 and (a in b or b in a))
