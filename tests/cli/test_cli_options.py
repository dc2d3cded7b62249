"""The global options never shadow a verb's: argparse reads every ``--word`` on the command line
against the global options first, and a verb's option that abbreviates two of them stops the
command as ambiguous (``--k`` once collided so with ``--key`` and a ``--key-...`` option)."""

from __future__ import annotations

import argparse

from memory_core.cli import build_parser


def _options(parser: argparse.ArgumentParser) -> set[str]:
    return {s for action in parser._actions for s in action.option_strings if s.startswith("--")}


def test_no_verb_option_is_ambiguous_with_the_global_ones():
    parser = build_parser()
    top = _options(parser)
    verbs = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    clashes = {}
    for name, sub in verbs.choices.items():
        for option in _options(sub) - top:
            matching = sorted(t for t in top if t.startswith(option))
            if len(matching) > 1:
                clashes[f"{name} {option}"] = matching
    assert clashes == {}
