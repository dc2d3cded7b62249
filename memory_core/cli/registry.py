"""The verbs of ``memcore``, registered one function each.

A verb declares its arguments, whether it writes (a refused write leaves no trace of a new home),
whether it needs a run identity and a scope, and formats its own output: it returns the JSON
document ``--json`` prints, the text printed otherwise, and the exit code.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..errors import InvalidInput

if TYPE_CHECKING:
    from ..api import Memory, MemoryTool

Output = tuple[Any, str, int]  # (JSON document, text, exit code)
EXIT_ERROR = 1  # a typed error, or a check that failed (audit verify)
EXIT_USAGE = 2  # the command line itself is wrong


class UsageError(InvalidInput):
    """The command line is wrong (exit ``EXIT_USAGE``)."""

    status = 400
    code = "USAGE"


@dataclass(frozen=True)
class Arg:
    """One argument of a verb: what ``argparse.ArgumentParser.add_argument`` takes."""

    flags: tuple[str, ...]
    options: Mapping[str, Any] = field(default_factory=dict)


def arg(*flags: str, **options: Any) -> Arg:
    return Arg(flags, options)


@dataclass(frozen=True)
class Call:
    """What a verb runs with: its arguments, the home, and (when the verb opens it) the memory and
    the tool bound to the run identity."""

    args: argparse.Namespace
    home: Path
    memory: Memory | None = None
    tool: MemoryTool | None = None


@dataclass(frozen=True)
class Verb:
    name: str
    help: str
    run: Callable[[Call], Output]
    arguments: tuple[Arg, ...] = ()
    key: bool = False  # takes KEY first
    scope: bool = True  # takes --scope
    identity: bool = True  # needs a run identity (--tenant, ...)
    writes: bool = False  # may create the home
    opens_home: bool = True  # False: the verb works beside the home (an evaluation)
    scope_help: str = ""


VERBS: dict[str, Verb] = {}


def verb(
    name: str,
    help: str,
    *arguments: Arg,
    key: bool = False,
    scope: bool = True,
    identity: bool = True,
    writes: bool = False,
    opens_home: bool = True,
    scope_help: str = "",
) -> Callable[[Callable[[Call], Output]], Callable[[Call], Output]]:
    """Register the decorated function as the verb ``name``."""

    def register(run: Callable[[Call], Output]) -> Callable[[Call], Output]:
        if name in VERBS:
            raise ValueError(f"the verb {name!r} is registered twice")
        VERBS[name] = Verb(name, help, run, arguments, key, scope, identity, writes, opens_home, scope_help)
        return run

    return register
