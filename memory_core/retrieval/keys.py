"""The key-match leg's planner: the words of a query that may be a row's key.

Pure. A key-like word holds a separator keys use (``_ . : / # -``) or mixes letters and digits
("deploy_window", "svc.checkout", "D1:3", "INC-4821"); a query of one word is a key candidate
whatever it holds. The leg looks each candidate up exactly, and as a prefix that ends where a key's
word ends: ``svc.checkout`` finds ``svc.checkout.timeout`` and ``deploy_`` finds ``deploy_window``,
but ``pet`` does not find ``petition`` (``services.search_legs``; docs/retrieval.md, "The key-match
leg").
"""

from __future__ import annotations

import re

MAX_KEY_TERMS = 8  # a query naming more key-like words than this looks them up no further
# A word that begins more keys than this names none of them in particular: it finds none by prefix.
MAX_PREFIX_KEYS = 16
SEPARATORS = "_.:/#-"
_SEPARATED = re.compile(r"[_.:/#-]")
_EDGES = "\"'`“”‘’()[]{}<>,;!?"


def key_terms(query: str) -> tuple[str, ...]:
    """The query's key candidates, each once, in the order they appear."""
    words = query.split()
    if len(words) == 1:
        candidates = [words[0].strip(_EDGES).rstrip(".:")]
    else:
        candidates = [w.strip(_EDGES).rstrip(".:") for w in words]
        candidates = [w for w in candidates if _SEPARATED.search(w) or _mixed(w)]
    return tuple(dict.fromkeys(c for c in candidates if c))[:MAX_KEY_TERMS]


def _mixed(word: str) -> bool:
    return any(c.isdigit() for c in word) and any(c.isalpha() for c in word)


def prefix_lookups(term: str) -> tuple[str, ...]:
    """The prefixes whose keys ``term`` begins at a word's end: the term itself when it ends with
    a separator, else the term followed by each separator."""
    if term[-1] in SEPARATORS:
        return (term,)
    return tuple(term + s for s in SEPARATORS)
