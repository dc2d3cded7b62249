"""A deterministic rule-based extractor: the offline default, and honest about being rules.

It reads first-person statements and a few simple relations ("I live in X", "my sister's name
is Y", "I started at Z in 2023", "I love X", "my favourite X is Y", "I am N years old"), resolves
dates against the session date ("last year", "in May", "three weeks ago") and pronouns against
the text it is given, across its turns ("My sister is called Maya. She lives in Oslo." → Maya
lives in Oslo). A standing instruction to the agent ("always answer in French") it marks
``about="agent"`` (``extraction.learnings``): the write step files it for review, never as a fact.
It understands nothing else, so its recall is low: it is the baseline a model must beat.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Sequence

from .durable import KnownMemory, restatements
from .learnings import agent_rule, normalize
from .model import Extracted, ExtractorOutput, Turn, slug

PROPER = r"(?P<obj>[A-Z][\w'&.-]*(?:\s+(?:of\s+|de\s+|the\s+|and\s+)?[A-Z][\w'&.-]*)*)"
PHRASE = r"(?P<obj>[^.,!?;:]+?)(?=\s+(?:and|but|because|so|when|since|with)\b|[.,!?;:]|$)"
NAME = r"(?P<obj>[A-Z][\w'-]+(?:\s+[A-Z][\w'-]+)?)"
KIN = (
    "sister",
    "brother",
    "mother",
    "mom",
    "father",
    "dad",
    "wife",
    "husband",
    "partner",
    "son",
    "daughter",
    "best friend",
    "friend",
    "boss",
    "grandma",
    "grandmother",
    "grandpa",
    "grandfather",
    "dog",
    "cat",
)
_KIN = "|".join(sorted(KIN, key=len, reverse=True))
JOBS = (
    "engineer",
    "teacher",
    "nurse",
    "doctor",
    "developer",
    "designer",
    "student",
    "artist",
    "writer",
    "counselor",
    "manager",
    "lawyer",
    "chef",
    "musician",
    "photographer",
    "scientist",
    "painter",
)


@dataclass(frozen=True, slots=True)
class Rule:
    pattern: re.Pattern
    attribute: str  # may name a group: {kin}, {thing}
    relation: str
    template: str  # the value as a statement: {s} subject, {o} object, {kin}, {thing}
    multi_valued: bool = False
    third_person: bool = False


def _r(text: str) -> re.Pattern:
    return re.compile(text, re.IGNORECASE)


# The verbs are matched without regard to case; the object patterns demand capitals themselves.
RULES = (
    Rule(
        _r(r"\bI(?:'m| am)?\s+(?:currently\s+)?(?:live|living|reside|residing|based)\s+in\s+(?-i:" + PROPER + ")"),
        "lives_in",
        "lives_in",
        "{s} lives in {o}",
    ),
    Rule(
        _r(r"\bI(?:'ve| have)?\s+(?:just\s+|recently\s+)?(?:moved|relocated)\s+(?:back\s+)?to\s+(?-i:" + PROPER + ")"),
        "lives_in",
        "lives_in",
        "{s} lives in {o}",
    ),
    Rule(
        _r(r"\bI(?:'m| am)?\s+(?:currently\s+)?(?:work|working)\s+(?:at|for)\s+(?-i:" + PROPER + ")"),
        "works_at",
        "works_at",
        "{s} works at {o}",
    ),
    Rule(
        _r(r"\bI\s+(?:started|began)\s+(?:a\s+new\s+job\s+|working\s+)?(?:at|with|for)\s+(?-i:" + PROPER + ")"),
        "works_at",
        "works_at",
        "{s} works at {o}",
    ),
    Rule(_r(r"\bI\s+(?:just\s+)?joined\s+(?-i:" + PROPER + ")"), "works_at", "works_at", "{s} works at {o}"),
    Rule(
        _r(
            r"\bmy\s+(?P<kin>"
            + _KIN
            + r")(?:'s\s+name\s+is|\s+is\s+(?:called|named)|\s+(?:called|named)|,)\s+(?-i:"
            + NAME
            + ")"
        ),
        "{kin}_name",
        "has_{kin}",
        "{s}'s {kin} is named {o}",
    ),
    Rule(
        _r(r"\bI\s+have\s+an?\s+(?P<kin>" + _KIN + r")\s+(?:named|called)\s+(?-i:" + NAME + ")"),
        "{kin}_name",
        "has_{kin}",
        "{s}'s {kin} is named {o}",
    ),
    Rule(_r(r"\bmy\s+name\s+is\s+(?-i:" + NAME + ")"), "name", "named", "{s}'s name is {o}"),
    Rule(_r(r"\bI(?:'m| am)\s+(?P<obj>\d{1,3})\s+(?:years?\s+old|yrs?\s+old)"), "age", "age", "{s} is {o} years old"),
    Rule(_r(r"\bI\s+work\s+as\s+an?\s+" + PHRASE), "occupation", "works_as", "{s} works as a {o}"),
    Rule(
        _r(r"\bI(?:'m| am)\s+an?\s+(?P<obj>(?:\w+\s+)?(?:" + "|".join(JOBS) + r"))\b"),
        "occupation",
        "works_as",
        "{s} works as a {o}",
    ),
    Rule(
        _r(r"\bmy\s+favou?rite\s+(?P<thing>[a-z]+(?:\s+[a-z]+)?)\s+is\s+" + PHRASE),
        "favorite_{thing}",
        "favorite_{thing}",
        "{s}'s favorite {thing} is {o}",
    ),
    Rule(
        _r(r"\bI\s+(?:really\s+|absolutely\s+)?(?:love|like|enjoy|adore)\s+" + PHRASE),
        "likes",
        "likes",
        "{s} likes {o}",
        multi_valued=True,
    ),
    Rule(
        _r(r"\b(?P<pron>she|he)\s+(?:lives|is\s+living)\s+in\s+(?-i:" + PROPER + ")"),
        "lives_in",
        "lives_in",
        "{s} lives in {o}",
        third_person=True,
    ),
    Rule(
        _r(r"\b(?P<pron>she|he)\s+(?:just\s+)?moved\s+to\s+(?-i:" + PROPER + ")"),
        "lives_in",
        "lives_in",
        "{s} lives in {o}",
        third_person=True,
    ),
    Rule(
        _r(r"\b(?P<pron>she|he)\s+works\s+(?:at|for)\s+(?-i:" + PROPER + ")"),
        "works_at",
        "works_at",
        "{s} works at {o}",
        third_person=True,
    ),
)

NAMING = tuple(r for r in RULES if r.attribute == "{kin}_name")  # the rules that name people (for pronouns)
_NOT_OBJECTS = {"i", "it", "that", "this", "the", "a", "an", "my", "you", "we", "they", "there", "here"}
_MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
_NUMBERS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
}
_DATE = re.compile(
    r"\b(?:in\s+(?P<month>" + "|".join(_MONTHS) + r")?\s*(?P<year>(?:19|20)\d{2})"
    r"|in\s+(?P<month_only>" + "|".join(_MONTHS) + r")"
    r"|(?P<last>last)\s+(?P<unit>year|month|week)"
    r"|(?P<yesterday>yesterday)"
    r"|(?P<n>\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)\s+(?P<ago_unit>years?|months?|weeks?|days?)\s+ago)\b",
    re.IGNORECASE,
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")


def resolve_date(text: str, session_date: datetime | None) -> datetime | None:
    """The first date expression in ``text``, resolved against the session date (UTC midnight);
    None when there is none, or when it falls outside the calendar ("in 0000", "a billion years
    ago", "yesterday" said on 0001-01-01): a date the text cannot give is not a reason to fail."""
    try:
        return _resolve_date(text, session_date)
    except (ValueError, OverflowError):
        return None


def _resolve_date(text: str, session_date: datetime | None) -> datetime | None:
    m = _DATE.search(text)
    if m is None:
        return None
    if m.group("year"):
        month = _MONTHS.get((m.group("month") or "").lower(), 1)
        return datetime(int(m.group("year")), month, 1, tzinfo=timezone.utc)
    if session_date is None:
        return None  # a relative date needs the session's date
    day = session_date.astimezone(timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    if m.group("month_only"):
        month = _MONTHS[m.group("month_only").lower()]
        year = day.year if month <= day.month else day.year - 1  # "in May" said in March is last May
        return datetime(year, month, 1, tzinfo=timezone.utc)
    if m.group("yesterday"):
        return day - timedelta(days=1)
    unit = (m.group("unit") or m.group("ago_unit") or "").lower().rstrip("s")
    n = 1 if m.group("last") else (_NUMBERS.get(m.group("n").lower()) or int(m.group("n")))
    if unit == "year":
        return day.replace(
            year=day.year - n, month=1 if m.group("last") else day.month, day=1 if m.group("last") else min(day.day, 28)
        )
    if unit == "month":
        month_index = day.year * 12 + day.month - 1 - n
        return datetime(
            month_index // 12, month_index % 12 + 1, 1 if m.group("last") else min(day.day, 28), tzinfo=timezone.utc
        )
    return day - timedelta(weeks=n) if unit == "week" else day - timedelta(days=n)


class RuleExtractor:
    """The offline default extractor. ``name`` goes into each row's provenance as its model."""

    name = "rules-v1"

    def extract(
        self, turns: Sequence[Turn], *, session_date: datetime | None, known: Sequence[KnownMemory] = ()
    ) -> ExtractorOutput:
        """The facts of ``turns``; one restating a ``known`` memory word for word is skipped."""
        facts: list[Extracted] = []
        # People named so far in the text given, as ((turn, offset), name): a pronoun may point
        # back past its own turn (a harvested span read after the spans banked before it).
        names: list[tuple[tuple[int, int], str]] = []
        for n, turn in enumerate(turns):
            if turn.role != "user":
                continue  # an assistant's "I" is the agent; memories, tool output and system text state nothing new
            subject = turn.speaker if turn.speaker != "user" else "user"
            when = turn.at or session_date
            for sentence in _SENTENCE.finditer(turn.content):
                text, offset = sentence.group(0), sentence.start()
                if text.rstrip().endswith("?"):
                    continue  # a question states nothing
                rule = agent_rule(text)
                if rule is not None:  # a rule about the agent: the write step files it for review
                    facts.append(_rule_fact(rule, turn, offset + text.index(rule)))
                names += [((n, offset + m.start()), m.group("obj")) for r in NAMING for m in r.pattern.finditer(text)]
                for rule in RULES:
                    for m in rule.pattern.finditer(text):
                        fact = self._fact(rule, m, text, (n, offset), turn, subject, names, when)
                        if fact is not None:
                            facts.append(fact)
        notes = ["rule-based extraction: first-person statements only"]
        if known:
            facts, skipped = restatements(facts, known)
            notes += [f"skipped {key}: it restates a stored memory" for key in skipped]
        return ExtractorOutput(tuple(facts), notes=tuple(notes))

    @staticmethod
    def _fact(
        rule: Rule,
        m: re.Match,
        text: str,
        at: tuple[int, int],
        turn: Turn,
        subject: str,
        names: list[tuple[tuple[int, int], str]],
        when: datetime | None,
    ) -> Extracted | None:
        number, offset = at
        obj = m.group("obj").strip().rstrip(".'")
        if not obj or obj.casefold() in _NOT_OBJECTS or len(obj) > 80:
            return None
        groups = {k: v.lower() for k, v in m.groupdict().items() if v and k in ("kin", "thing")}
        who = subject
        if rule.third_person:
            earlier = [name for where, name in names if where < (number, offset + m.start())]
            if not earlier:
                return None  # a pronoun with nothing in the text to resolve it to
            who = earlier[-1]
        attribute = rule.attribute.format(**groups).replace(" ", "_")
        relation = rule.relation.format(**groups).replace(" ", "_")
        shown = "The user" if who == "user" else who
        value = rule.template.format(s=shown, o=obj, **groups)
        start, end = offset + m.start(), offset + m.end()
        return Extracted(
            subject=who,
            attribute=attribute,
            value=value,
            relation=(who, relation, obj),
            turn_id=turn.turn_id,
            span=(start, end),
            quote=turn.content[start:end],
            valid_from=resolve_date(text[m.start() :], when),
            source_role=turn.role,
            confidence=0.6,
            multi_valued=rule.multi_valued,
        )


def _rule_fact(rule: str, turn: Turn, start: int) -> Extracted:
    """A rule the user states about the agent, marked ``about="agent"`` (keyed by its words)."""
    return Extracted(
        subject="agent",
        attribute="rule:" + slug(normalize(rule))[:80],
        value=rule,
        relation=None,
        turn_id=turn.turn_id,
        span=(start, start + len(rule)),
        quote=rule,
        source_role=turn.role,
        confidence=0.6,
        about="agent",
    )
