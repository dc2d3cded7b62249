"""The key-match leg's planner: the words of a query that may be a row's key.

Pure. A key-like word holds a separator keys use (``_ . : / # -``) or mixes letters and digits
("deploy_window", "svc.checkout", "D1:3", "INC-4821"); a query of one word is a key candidate
whatever it holds. The leg looks each candidate up exactly (``services.search``); prefix matches
are not made (docs/retrieval.md, "The key-match leg").
"""

from __future__ import annotations

import re

MAX_KEY_TERMS = 8  # a query naming more key-like words than this looks them up no further
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
