"""Learnings: a rule a user states about the agent ("always answer in French", "never use emojis")
is not a memory of the user. Extraction marks it ``about="agent"`` and the write step files it to
the learnings queue as a candidate a reviewer accepts or rejects (``docs/extraction.md``).

Everything here is pure: the classifier that says whether a sentence is such a rule, the
normalized form candidates are deduplicated by, and the decisions (a review, what an erasure of a
supporter leaves of a candidate). The service applies them through the store's port.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from datetime import datetime

from ..errors import WrongState

PENDING, ACCEPTED, REJECTED = "pending", "accepted", "rejected"
STATUSES = (PENDING, ACCEPTED, REJECTED)
RULE_CHARS = 500  # a longer "sentence" is a paragraph, not a rule a reviewer can judge

# What the agent does when it talks: a rule names one of these (bare, or as a gerund after
# "stop" / "avoid"). A verb outside the list ("never eat pork") is about the user's own life.
_VERBS = (
    "answer reply respond write use speak talk format include add say mention cite ask greet sign keep be "
    "give show explain summarize summarise start begin end put send list quote apologize apologise translate "
    "spell round check confirm suggest recommend assume limit number bold capitalize capitalise abbreviate "
    "reference link mark label respond return"
).split()
VERBS = frozenset(_VERBS) | {v + "ing" for v in _VERBS} | {v[:-1] + "ing" for v in _VERBS if v.endswith("e")}

_FILLER = r"(?:(?:please|ok(?:ay)?|also|and|so|oh)\b[,\s]*)*"
_LEAD = r"(?:(?P<lead>from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|henceforth)\b[,\s]*)?"
_MODAL = (
    r"(?P<modal>you\s+(?:should|must|need\s+to|have\s+to)\s+(?:always\s+|never\s+|not\s+)?"
    r"|always\s+|never\s+|(?:don'?t|do\s+not)\s+(?:ever\s+)?|stop\s+|avoid\s+|make\s+sure\s+(?:to|you)\s+)?"
)
_RULE = re.compile(r"^\s*" + _FILLER + _LEAD + _FILLER + _MODAL + r"(?P<verb>[a-z]+)\b", re.IGNORECASE)
# How the user wants to be named is a fact about the user ("call me Ana"), never a rule.
_NAMING = re.compile(r"\b(?:call|address|refer\s+to|name)\s+me\b", re.IGNORECASE)
_WORDS = re.compile(r"[^\W_]+(?:'[^\W_]+)?")


def agent_rule(sentence: str) -> str | None:
    """The rule ``sentence`` states about the agent (the sentence, trimmed), or None.

    A rule is an instruction to the agent that lasts: a marker of duration or of a standing
    instruction (always, never, don't, stop, avoid, make sure, you should/must, from now on)
    before a verb of what the agent does when it answers. A question, a one-off request ("please
    answer this in French" without a marker), and how the user wants to be named are not rules."""
    text = sentence.strip()
    if not text or text.endswith("?") or len(text) > RULE_CHARS or _NAMING.search(text):
        return None
    m = _RULE.match(text)
    if m is None or not (m.group("lead") or m.group("modal")):
        return None
    if m.group("verb").casefold() not in VERBS:
        return None
    return text


_DROPPED = re.compile(
    r"^(?:(?:please|ok(?:ay)?|also|and|so|oh)\s+)*(?:(?:from now on|going forward|in (?:the )?future|henceforth)\s+)?"
    r"(?:(?:please|ok(?:ay)?|also|and|so|oh)\s+)*"
)


def normalize(rule: str) -> str:
    """The form candidates are deduplicated by: words only, case folded, without the fillers and
    the "from now on" lead ("From now on, always answer in French!" = "always answer in french")."""
    words = " ".join(w.casefold() for w in _WORDS.findall(rule))
    return _DROPPED.sub("", words).strip() or words


def rule_digest(rule: str) -> str:
    """What a candidate is found by again, even once its text was erased: the SHA-256 of its
    normalized form (so a rejected rule stated again never comes back as pending)."""
    return hashlib.sha256(normalize(rule).encode("utf-8")).hexdigest()


def supporter_owner(tenant: str, user: str | None, agent: str | None) -> tuple[str, str]:
    """The namespace (scope, owner) a supporter row lives in: the user's, so the user's erasure
    takes it; the agent's, or the tenant's, when the run named no user."""
    if user:
        return ("user", user)
    return ("agent", agent) if agent else ("tenant", tenant)


@dataclass(frozen=True, slots=True)
class Supporter:
    """Who stated a candidate's rule, where, and in which words: the identity tuple of the run
    that extracted it, the agent it was said to, the turn and the quote."""

    learning_id: str
    tenant: str
    user: str | None
    agent: str | None
    session: str | None
    run: str | None
    turn_id: str
    quote: str
    at: datetime

    @property
    def owner(self) -> tuple[str, str]:
        return supporter_owner(self.tenant, self.user, self.agent)


@dataclass(frozen=True, slots=True)
class Learning:
    """One version of a candidate: a rule said to an agent (``owner_id`` of scope ``agent``; the
    tenant's own scope when the run named no agent). ``rule`` is empty once an erasure took its
    last supporter from a decided candidate: the decision stays, the words go."""

    learning_id: str
    version: int
    tenant: str
    scope: str
    owner_id: str
    rule: str
    rule_sha256: str
    status: str
    created_at: datetime
    recorded_at: datetime
    decided_by: str | None = None
    decided_at: datetime | None = None
    supporters: tuple[Supporter, ...] = ()

    @property
    def erased(self) -> bool:
        return not self.rule


def decide(learning: Learning, *, accept: bool, actor: str, at: datetime) -> Learning | None:
    """A reviewer's decision as the candidate's next version; None when it already stands (the
    same decision again writes nothing). A reviewer may change a decision; a rule whose words were
    erased can still be rejected, never accepted (there is nothing left to follow)."""
    status = ACCEPTED if accept else REJECTED
    if learning.status == status:
        return None
    if accept and learning.erased:
        raise WrongState(f"learning {learning.learning_id}'s rule was erased: it can be rejected, not accepted")
    return dataclasses.replace(
        learning, version=learning.version + 1, status=status, decided_by=actor, decided_at=at, recorded_at=at
    )


def reword(learning: Learning, at: datetime) -> Learning | None:
    """A supported candidate whose words are none of its supporters' quotes (their author was
    erased) takes its earliest remaining supporter's words on a new version; None when it needs
    nothing. The words normalize alike (that is why they support it), so a decision still holds."""
    quotes = [s.quote for s in learning.supporters]
    if not learning.rule or not quotes or learning.rule in quotes:
        return None
    return dataclasses.replace(learning, version=learning.version + 1, rule=quotes[0], recorded_at=at, supporters=())


def after_last_supporter(learning: Learning, at: datetime) -> Learning | None:
    """What an erasure that took a candidate's last supporter leaves: nothing of a pending one
    (None: it is deleted), and a decided one's decision on a new version with its rule blanked."""
    if learning.status == PENDING:
        return None
    return dataclasses.replace(learning, version=learning.version + 1, rule="", recorded_at=at, supporters=())
