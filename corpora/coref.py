"""Coreference items for the per-span versus whole-batch experiment: MuDoCo and a synthetic set.

An *item* is a mention in a later turn whose antecedent (a name) is in an earlier turn. Its
paired outcome is whether each arm of the experiment resolves the mention to that name.

MuDoCo (``../shared/corpora/mudoco``, CC BY-NC 4.0; facebookresearch/mudoco) supplies the links
between mentions; the loader reads it from there or from a path the user gives, never copies
it. The synthetic corpus is built so that every answer is known by construction.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from memory_core.extraction.coref import SPEAKERS, is_named

MUDOCO_DOMAINS = ("music", "news", "reminders", "weather")
MUDOCO_LICENCE = "MuDoCo (facebookresearch/mudoco), CC BY-NC 4.0: non-commercial use, attribution"


class CorpusNotFound(FileNotFoundError):
    pass


@dataclass(frozen=True, slots=True)
class CorefItem:
    corpus: str  # mudoco:<domain> | synthetic
    dialog_id: str
    turns: tuple[str, ...]  # the dialog's utterances up to and including the mention's turn
    mention: str
    mention_start: int  # offset of the mention in the last turn
    antecedents: tuple[str, ...]  # the names (in earlier turns) the mention refers to


def locate_mudoco(path: str | Path | None, shared_root: Path) -> Path:
    folder = Path(path) if path else shared_root / "corpora" / "mudoco"
    if not any((folder / f"mudoco_{d}.json").exists() for d in MUDOCO_DOMAINS):
        raise CorpusNotFound(
            f"no MuDoCo files (mudoco_<domain>.json) in {folder}; pass --data FOLDER or set "
            "MEMCORE_SHARED to the folder holding corpora/mudoco"
        )
    return folder


def mudoco_items(
    folder: Path, *, domains: Iterable[str] = MUDOCO_DOMAINS, split: str | None = None, limit: int | None = None
) -> list[CorefItem]:
    items: list[CorefItem] = []
    for domain in domains:
        path = folder / f"mudoco_{domain}.json"
        if not path.exists():
            continue
        dialogs = json.loads(path.read_text())["dialogs"]
        for dialog_id, dialog in sorted(dialogs.items()):
            if split and dialog.get("split") != split:
                continue
            turns = dialog["turns"]
            texts = [t["utterance"] for t in turns]
            for turn in turns:
                for chain in turn.get("links") or []:
                    items.extend(_items_of_chain(f"mudoco:{domain}", dialog_id, texts, chain))
    items = _dedupe(items)
    return items[:limit] if limit else items


def _items_of_chain(corpus: str, dialog_id: str, texts: list[str], chain: list[dict]) -> list[CorefItem]:
    mentions = sorted(chain, key=lambda m: (m["turn_id"], m["span"]["start"]))
    target = mentions[-1]
    if is_named(target["text"]) or target["text"].casefold() in SPEAKERS:
        return []  # a name resolves itself; I/you name the speakers
    names = tuple(
        dict.fromkeys(m["text"] for m in mentions if m["turn_id"] < target["turn_id"] and is_named(m["text"]))
    )
    if not names:
        return []
    last = target["turn_id"]
    return [CorefItem(corpus, dialog_id, tuple(texts[:last]), target["text"], target["span"]["start"], names)]


def _dedupe(items: list[CorefItem]) -> list[CorefItem]:
    seen, out = set(), []
    for item in items:
        key = (item.corpus, item.dialog_id, len(item.turns), item.mention_start)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


# -- the synthetic corpus ----------------------------------------------------------------------

PEOPLE = [
    ("Maya Lopez", "she"),
    ("Tomas Berg", "he"),
    ("Ana Costa", "she"),
    ("Omar Haddad", "he"),
    ("Lena Fischer", "she"),
    ("Kenji Sato", "he"),
    ("Priya Nair", "she"),
    ("Diego Ruiz", "he"),
]
THINGS = ["Blue Harbor", "Quiet Storm", "Northern Lights", "Golden Hour", "Paper Moon", "Silver Lining"]
OPENERS = [
    "I had lunch with {name} today.",
    "{name} called me this morning.",
    "Do you remember {name}?",
    "I ran into {name} at the station.",
]
THING_OPENERS = ["Put on {thing} for me.", "I keep humming {thing}.", "Have you heard {thing}?"]
FILLERS = ["The weather was awful.", "Traffic was slow again.", "Okay.", "That sounds nice.", "Sure thing."]
FOLLOWS = [
    "{pron_cap} said the project is finished.",
    "I think {pron} moved to a new flat.",
    "Remind me to call {obj} tomorrow.",
]
THING_FOLLOWS = ["Play it again please.", "Add it to my favourites.", "How long is that one?"]


def synthetic_items(seed: int = 3, dialogs: int = 200) -> list[CorefItem]:
    """Dialogs whose later turn points back (he/she/it/that one) at a name two or three turns
    earlier, with a distractor of the other kind in between: the answer is known by construction."""
    rng = random.Random(seed)
    out = []
    for n in range(dialogs):
        person, pron = rng.choice(PEOPLE)
        thing = rng.choice(THINGS)
        if rng.random() < 0.5:  # the mention points at a person; a thing sits in between as a distractor
            turns = [
                rng.choice(OPENERS).format(name=person),
                rng.choice(FILLERS),
                rng.choice(THING_OPENERS).format(thing=thing) if rng.random() < 0.3 else rng.choice(FILLERS),
            ]
            follow = rng.choice(FOLLOWS).format(
                pron=pron, pron_cap=pron.capitalize(), obj="him" if pron == "he" else "her"
            )
            mention = (
                pron.capitalize()
                if follow.startswith(pron.capitalize())
                else ("him" if pron == "he" else "her")
                if "call" in follow
                else pron
            )
            answer = person
        else:  # the mention points at a thing; a person sits in between only when it would not mislead
            turns = [rng.choice(THING_OPENERS).format(thing=thing), rng.choice(FILLERS)]
            follow = rng.choice(THING_FOLLOWS)
            mention = "it" if " it " in f" {follow} " else "that one"
            answer = thing
        turns.append(follow)
        start = follow.find(mention)
        out.append(CorefItem("synthetic", f"syn-{n:04d}", tuple(turns), mention, start, (answer,)))
    return out
