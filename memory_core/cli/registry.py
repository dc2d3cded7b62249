"""The verbs of ``memcore``, registered one function each.

A verb declares its arguments, whether it writes (a refused write leaves no trace of a new home),
whether it needs a run identity and a scope, and formats its own output: it returns the JSON
document ``--json`` prints, the text printed otherwise, and the exit code.

With ``--url`` (or ``MEMCORE_URL``) a verb runs through a memory service instead of the home: a
verb of the tool (one that needs a run identity) gets the service's remote tool as ``call.tool``;
a verb of the home itself runs there only if it declares ``remote`` and uses ``call.remote`` (the
``RemoteMemory``'s maintenance methods), and is otherwise refused with ``HOME_REQUIRED``.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping

from ..errors import InvalidInput, MemcoreError

if TYPE_CHECKING:
    from ..api import Memory, MemoryTool
    from ..client import RemoteMemory

Output = tuple[Any, str, int]  # (JSON document, text, exit code)
EXIT_ERROR = 1  # a typed error, or a check that failed (audit verify)
EXIT_USAGE = 2  # the command line itself is wrong

# A verb that printed its one document itself, while it ran (``Call.emit``: the announcement of
# ``serve``), or that must print nothing on stdout (``mcp``, whose stdout is the protocol's),
# answers this as its document: nothing more is printed.
ALREADY_ANSWERED: Any = object()


class HomeRequired(MemcoreError):
    """The verb works on the home itself and has no counterpart through a memory service."""

    status = 400
    code = "HOME_REQUIRED"


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


def _print_nothing(doc: Any) -> None:
    return None


@dataclass(frozen=True)
class Call:
    """What a verb runs with: its arguments, the home (``None`` through a service), and (when the
    verb opens it) the memory and the tool bound to the run identity; through a service, the
    ``RemoteMemory`` and its tool (the same methods as ``MemoryTool``). ``emit`` prints a document
    on stdout at once (a verb that then answers ``ALREADY_ANSWERED``)."""

    args: argparse.Namespace
    home: Path | None
    memory: Memory | None = None
    tool: MemoryTool | None = None
    remote: RemoteMemory | None = None
    emit: Callable[[Any], None] = _print_nothing


@dataclass(frozen=True)
class Verb:
    name: str
    help: str
    run: Callable[[Call], Output]
    arguments: tuple[Arg, ...] = ()
    key: bool = False  # takes KEY first
    scope: bool = True  # takes --scope
    identity: bool = True  # needs a run identity (--tenant, ...)
    writes: bool | Callable[[argparse.Namespace], bool] = False  # may create the home (per command line)
    opens_home: bool = True  # False: the verb works beside the home (an evaluation) or opens it itself
    scope_help: str = ""
    remote: bool = False  # a verb of the home itself (no identity) that also runs through a service

    def creates(self, args: argparse.Namespace) -> bool:
        """Whether this command may create the home (and so must leave no trace when refused)."""
        return self.writes(args) if callable(self.writes) else self.writes


VERBS: dict[str, Verb] = {}


def verb(
    name: str,
    help: str,
    *arguments: Arg,
    key: bool = False,
    scope: bool = True,
    identity: bool = True,
    writes: bool | Callable[[argparse.Namespace], bool] = False,
    opens_home: bool = True,
    scope_help: str = "",
    remote: bool = False,
) -> Callable[[Callable[[Call], Output]], Callable[[Call], Output]]:
    """Register the decorated function as the verb ``name``."""

    def register(run: Callable[[Call], Output]) -> Callable[[Call], Output]:
        if name in VERBS:
            raise ValueError(f"the verb {name!r} is registered twice")
        VERBS[name] = Verb(name, help, run, arguments, key, scope, identity, writes, opens_home, scope_help, remote)
        return run

    return register
