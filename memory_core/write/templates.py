"""Text rules for the write-time peer verdict: words, templated substitution, canonical form, values.

Pure functions over strings. The verdict compares a new fact with a close peer and must decide
without a model whether the new text restates the peer, replaces its object, or is another fact.
Every rule leans towards "no pair": a missed update costs a conflict mark, a wrong pair retires a
fact that still holds.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Callable


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


ARTICLES = _set("""a an the le la les un une des du der die das den dem ein eine einen einem einer
    eines el los las unos unas lo gli uno o os um uma""")  # not "il"/"i"/"as": pronouns elsewhere
COPULAS = _set("""is are was were am be been being isn't aren't wasn't weren't i'm you're we're
    they're it's he's she's that's there's here's what's who's where's est sont suis es sommes êtes
    était étaient étais sera seront fut ist sind bin bist seid war waren wäre está están estoy
    estás estamos son soy eres somos era eran fue fueron ser estar è sono sei siamo siete erano fu
    essere é são sou foi foram zijn
    является являются есть был была было были будет""")
HAVE_VERBS = _set("""have has had i've we've you've they've ai avons avez ont avait avaient habe
    hast hat haben habt hatte hatten tengo tienes tiene tenemos tienen tenía ho hai ha abbiamo
    hanno tenho tem temos têm tinha есть имеет имею heb heeft hebben""")
PREPOSITIONS = _set("""in at on to from of for with by about into onto near under over since until
    after before during via per without within between among through across behind beside around
    à au aux de en dans chez pour par sur sous avec sans vers depuis pendant entre im an am auf aus
    bei beim mit nach von vom zu zum zur für über unter vor hinter neben seit ohne gegen durch a al
    del con por para desde hasta sobre sin di dal dalla della nel nella su tra fra da em na nos nas
    dos das com até в во на у к ко с со из от до по о об при для за под над без через около""")
POSSESSIVES = _set("""my your his her its our their mon ma mes ton ta tes son sa ses notre nos votre
    vos leur leurs mein meine meinen meinem meiner dein deine deinen sein seine seinen ihr ihre
    ihren unser unsere euer eure mi mis tus su sus nuestro nuestra vuestro vuestra mio mia miei mie
    tuo tua suo sua nostro nostra meu minha teu seu nosso nossa мой моя моё мои твой твоя твои наш
    наша наше ваш ваша свой своя своё""")  # not "tu": French "you"
_OF = _set("of de du des von vom di del della dei degli delle")
_PRONOUNS = _set("""i me you he him she it we us they them this that these those who what which je
    tu il elle on nous vous ils elles te se moi toi lui ich du er sie es wir mich dich sich yo él
    ella nosotros ellos io lei noi voi loro eu ele ela nós eles я ты он она оно мы вы они меня тебя
    его её нас их""")
_AUXILIARIES = _set("""do does did will would shall should can could might must not don't doesn't
    didn't won't can't wird werden kann and or but et ou mais und oder aber y pero e ma и или но""")
# Homographs of ordinary nouns ("war", "era", "son", "hat", "bin") stay content words.
STOPWORDS = (ARTICLES | COPULAS | HAVE_VERBS | PREPOSITIONS | POSSESSIVES | _OF | _PRONOUNS | _AUXILIARIES) - _set(
    "war era son hat bin"
)
_DATE_WORDS = _set("""january february april june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday""")
# Capitalised short words that end with a dot which belongs to them ("St. Louis", "Dr. Who").
_ABBREVIATIONS = _set("St Dr Mr Mrs Ms Mt Ft Jr Sr Prof Gen Col Capt Lt Sgt Rev Hon Ave Rd Blvd Inc Ltd")

_SEPARATORS = frozenset(".,;:!?()[]{}¡¿。、।॥،؟")
_MODIFIERS = frozenset("\ufe0e\ufe0f\u20e3") | frozenset(map(chr, range(0x1F3FB, 0x1F400)))
_JOINERS = frozenset("\u200c\u200d")
# Scripts written without spaces between words: Thai, Lao, Myanmar, Khmer, kana and Han.
_UNSPACED = (
    (0x0E00, 0x0EFF),
    (0x1000, 0x109F),
    (0x1780, 0x17FF),
    (0x3005, 0x3007),
    (0x3040, 0x30FF),
    (0x31F0, 0x31FF),
    (0x3400, 0x4DBF),
    (0x4E00, 0x9FFF),
    (0xF900, 0xFAFF),
    (0x20000, 0x2FFFF),
)
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|«([^»]+)»|„([^“”]+)[“”]|「([^」]+)」|(?<!\w)'([^']+)'(?!\w)")


def _unspaced(ch: str) -> bool:
    code = ord(ch)
    return any(lo <= code <= hi for lo, hi in _UNSPACED)


def _kind(ch: str) -> str:
    """w: in a spaced word, u: unspaced script, s: break, m: emoji modifier or joiner (never
    a word alone), x: a mark that is a word of its own."""
    if ch.isspace() or ch in _SEPARATORS:
        return "s"
    if _unspaced(ch):
        return "u"
    if ch in _MODIFIERS or ch in _JOINERS:
        return "m"
    return "w" if unicodedata.category(ch)[0] in "LMN" else "x"


def _joins(text: str, j: int) -> bool:
    """Whether the character at j sits inside a word: an apostrophe or hyphen between letters,
    a comma, dot, colon or slash between digits, a dot inside "U.S." or a domain name."""
    if j + 1 >= len(text) or _kind(text[j + 1]) != "w":
        return False
    ch, prev, nxt = text[j], text[j - 1], text[j + 1]
    if ch in "'-" or ch in _JOINERS:
        return True
    if ch in ",.:/" and prev.isdigit() and nxt.isdigit():
        return True
    return ch == "." and prev.isalpha() and nxt.isalpha()


def _abbreviation_dot(text: str, start: int, end: int) -> bool:
    """A dot after "St" or an initial, when more text follows, belongs to the word."""
    if end + 2 >= len(text) or text[end] != "." or not text[end + 1].isspace():
        return False
    last = text[start:end].rsplit(".", 1)[-1]
    return (len(last) == 1 and last.isupper()) or last in _ABBREVIATIONS


# A peer check tokenizes every peer's value once per write, and the same values come back write
# after write: the tokens of recent texts are kept (measured: a revision at 100k facts spent 14 of
# its 40 ms here; docs/benchmarks.md, "Memory service"). Long texts are tokenized every time.
_CACHED_TEXT_CHARS = 2048
_CACHED_TEXTS = 16384


def _recent_texts(fn: Callable[[str], tuple[str, ...]]) -> Callable[[str], tuple[str, ...]]:
    """``fn`` with its answers for recent texts of up to ``_CACHED_TEXT_CHARS`` kept."""
    cached = functools.lru_cache(maxsize=_CACHED_TEXTS)(fn)

    @functools.wraps(fn)
    def call(text: str) -> tuple[str, ...]:
        return cached(text) if len(text) <= _CACHED_TEXT_CHARS else fn(text)

    return call


@_recent_texts
def _raw_tokens(text: str) -> tuple[str, ...]:
    """Tokens in their written case, after NFKC and with the curly apostrophe made straight."""
    text = unicodedata.normalize("NFKC", text).replace("\u2019", "'")
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        kind, j = _kind(text[i]), i + 1
        if kind == "u":
            while j < n and (_unspaced(text[j]) or unicodedata.category(text[j])[0] == "M"):
                j += 1
        elif kind == "w":
            while j < n and (_kind(text[j]) == "w" or _joins(text, j)):
                j += 1
            if _abbreviation_dot(text, i, j):
                j += 1
        elif kind == "x":
            # An emoji keeps its variation selector, skin tone, keycap and ZWJ sequence; a flag
            # is two regional indicators.
            while j < n and (text[j] in _MODIFIERS or (text[j] == "\u200d" and j + 1 < n)):
                j += 2 if text[j] == "\u200d" else 1
            if 0x1F1E6 <= ord(text[i]) <= 0x1F1FF and j < n and 0x1F1E6 <= ord(text[j]) <= 0x1F1FF:
                j += 1
        else:
            i = j
            continue
        out.append(text[i:j])
        i = j
    return tuple(out)


def words(text: str) -> tuple[str, ...]:
    """The text's words, lowercased. Sentence punctuation separates; other marks are words."""
    return tuple(token.lower() for token in _raw_tokens(text))


def _punctuation_only(word: str) -> bool:
    return all(unicodedata.category(ch)[0] == "P" for ch in word)


@_recent_texts
def _plain(text: str) -> tuple[str, ...]:
    return tuple(w for w in words(text) if not _punctuation_only(w))


def canonical_form(text: str) -> str:
    """One spelling for texts that differ only in case, spacing, width or punctuation."""
    return " ".join(_plain(text))


def content_words(text: str) -> frozenset[str]:
    """Words that carry content: what remains without function words and punctuation."""
    return frozenset(w for w in _plain(text) if w not in STOPWORDS)


def _values(text: str) -> set[str]:
    found = {canonical_form(next(g for g in m.groups() if g)) for m in _QUOTED.finditer(text)}
    for index, token in enumerate(t for t in _raw_tokens(text) if not _punctuation_only(t)):
        low = token.lower()
        if any(ch.isdigit() for ch in token) or low in _DATE_WORDS:
            found.add(low)
        elif index and token[0].isupper() and low not in STOPWORDS:
            found.add(low)
    found.discard("")
    return found


def values_differ(a: str, b: str) -> bool:
    """True when each text states a value (number, date, name, quotation) the other does not.

    Two texts with the same content words can still name different things ("Alice met Bob" /
    "Bob met Alice"); such a pair is not a duplicate.
    """
    spelled_a, spelled_b = f" {canonical_form(a)} ", f" {canonical_form(b)} "
    only_a = any(f" {v} " not in spelled_b for v in _values(a))
    only_b = any(f" {v} " not in spelled_a for v in _values(b))
    return only_a and only_b


@dataclass(frozen=True, slots=True)
class Substitution:
    """Two statements that share a beginning (and maybe an ending) and differ in one span:
    the old text's span is replaced by the new text's."""

    shared_prefix: tuple[str, ...]
    old_span: tuple[str, ...]
    new_span: tuple[str, ...]
    shared_suffix: tuple[str, ...]


def _numbers(span: tuple[str, ...]) -> bool:
    return all(_NUMBER.fullmatch(w) for w in span)


def _ending_pairs(last: str, suffix: tuple[str, ...], numbers: bool) -> bool:
    """A shared ending of two words or more is part of the object only after an article; after a
    preposition, copula or article it may be a detail both keep, if it opens with a preposition
    (or the spans are numbers with a unit). Anywhere else the spans are likely predicates."""
    if last in ARTICLES:
        return True
    slot = last in PREPOSITIONS or last in COPULAS
    return slot and (suffix[0] in PREPOSITIONS or numbers)


def _names_attributes(prefix: tuple[str, ...]) -> bool:
    """Whether the beginning is a bare name and a copula or have verb ("Alice is", "У меня есть"),
    so the spans are two attributes of one subject rather than two values of one attribute."""
    end = len(prefix)
    while end and prefix[end - 1] in ARTICLES:
        end -= 1
    if not end or (prefix[end - 1] not in COPULAS and prefix[end - 1] not in HAVE_VERBS):
        return False
    before = prefix[: end - 1]
    if any(w in ARTICLES or w in POSSESSIVES or w in _OF for w in before):
        return False  # "the capital of Italy is", "my favourite colour is": an attribute phrase
    # "Italy's capital is" names an attribute; "Macy's is" is a name.
    return not any(w.endswith("'s") for w in before[:-1])


def _only_a_name(prefix: tuple[str, ...], text: str) -> bool:
    """Is the shared beginning only a name (every word capitalised in the text, "I" included)?
    Then the differing spans hold the predicates, not two objects of one predicate."""
    raw = [t for t in _raw_tokens(text) if not _punctuation_only(t)][: len(prefix)]
    return len(raw) == len(prefix) and all(t[:1].isupper() for t in raw)


def substitution(a: str, b: str) -> Substitution | None:
    """The templated substitution turning `a` (old) into `b` (new), or None when they do not pair.

    They pair when they share the subject and predicate and differ in the object: a shared
    beginning of at least one word, then one differing span each, then an ending that is only
    the object's head or a detail both keep.
    """
    old, new = _plain(a), _plain(b)
    if old == new:
        return None
    p = 0
    while p < min(len(old), len(new)) and old[p] == new[p]:
        p += 1
    s = 0
    while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
        s += 1
    prefix, suffix = old[:p], old[len(old) - s :]
    old_span, new_span = old[p : len(old) - s], new[p : len(new) - s]
    if not prefix or not old_span or not new_span:
        return None  # nothing shared up front: different subjects, or one text extends the other
    if all(w in ARTICLES or w in POSSESSIVES for w in prefix):
        return None  # "The cat ..." / "The dog ...": the subject itself differs
    if not suffix and _only_a_name(prefix, b):
        return None  # "Diego lives in Austin" / "Diego works at Globex": two predicates of one subject
    if any(w in COPULAS for w in old_span + new_span + suffix):
        return None  # the span holds or precedes the copula, so it is the subject
    numbers = _numbers(old_span) and _numbers(new_span)
    if s >= 2 and not _ending_pairs(prefix[-1], suffix, numbers):
        return None
    if _names_attributes(prefix) and not numbers:
        return None
    return Substitution(prefix, old_span, new_span, suffix)
