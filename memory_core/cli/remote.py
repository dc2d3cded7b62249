"""``--url``: a verb run through a memory service (``memcore serve``) instead of on the home.

The service owns the home; the command holds an API key (``--key`` / ``MEMCORE_KEY``) and the key
alone says who calls. So identity options are refused with the URL (``IDENTITY_IN_REQUEST``), as
the service refuses a request that names a tenant, a user, an agent or a grant; ``--session``,
``--run`` and ``--model`` are sent as the provenance of the writes. Options that describe a home (``--home``,
``--embedder``...) are refused too: the service's home and embedder are the ones it was started
with. Every verb prints what it prints on a home.
"""

from __future__ import annotations

import argparse
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Callable, Iterator

from ..environment import resolve_service
from ..errors import IdentityOnWire, Unauthenticated
from .registry import Call, HomeRequired, Output, UsageError, Verb

if TYPE_CHECKING:
    from ..client import RemoteMemory

IDENTITY_FLAGS = (("tenant", "--tenant"), ("user", "--user"), ("agent", "--agent"), ("admin", "--admin"))
HOME_FLAGS = (
    ("home", "--home"),
    ("embedder", "--embedder"),
    ("embedder_base_url", "--embedder-base-url"),
    ("embedder_model", "--embedder-model"),
    ("embedder_dim", "--embedder-dim"),
    ("embedder_path", "--embedder-path"),
)


def service_of(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(URL, key) of the service the command goes through; URL ``None``: the home itself.
    ``--url`` wins; ``MEMCORE_URL`` counts unless ``--home`` names a home on the command line."""
    url = getattr(args, "url", None)
    if not url and args.home:
        return None, None
    return resolve_service(url, getattr(args, "api_key", None))


def refuse_identity(args: argparse.Namespace, url: str) -> None:
    """The key alone says who calls a service: identity options are refused, never ignored."""
    named = [flag for dest, flag in IDENTITY_FLAGS if getattr(args, dest)]
    if named:
        raise IdentityOnWire(
            f"{', '.join(named)} with a memory service ({url}): its API key alone says who calls. Drop "
            f"{'them' if len(named) > 1 else 'it'}, or use a key made for that identity (memcore keys create)",
            fields=[flag.lstrip("-") for flag in named],
        )


def refuse_home_options(args: argparse.Namespace) -> None:
    named = [flag for dest, flag in HOME_FLAGS if getattr(args, dest)]
    if named:
        raise UsageError(
            f"{', '.join(named)} describe{'s' if len(named) == 1 else ''} a home; with --url the service's "
            "home and embedder are used (give --home or --url, not both)"
        )


@contextmanager
def connect(args: argparse.Namespace, url: str, key: str | None) -> Iterator[RemoteMemory]:
    """The service at ``url``, called with ``key`` (``--session``, ``--run``, ``--model`` as provenance)."""
    if not key:
        raise Unauthenticated(
            f"the memory service at {url} needs an API key: --key or MEMCORE_KEY (memcore keys create makes one)"
        )
    from ..client import RemoteMemory  # imported only by a command that calls a service

    with RemoteMemory(url, key, session=args.session, run=args.run, model=args.model) as remote:
        yield remote


def run_remote(verb: Verb, args: argparse.Namespace, url: str, key: str | None, emit: Callable[[Any], None]) -> Output:
    """Run ``verb`` through the service: a verb of the tool on the key's remote tool, a verb of
    the home on the service's maintenance routes (admin keys), if it has them."""
    refuse_identity(args, url)
    refuse_home_options(args)
    if not verb.identity and not verb.remote:
        raise HomeRequired(
            f"memcore {verb.name} works on the home itself and cannot run through a memory service: "
            "run it with --home on the machine that holds the home, while no service holds it"
        )
    with connect(args, url, key) as remote:
        tool = remote.tool() if verb.identity else None
        return verb.run(Call(args, None, tool=tool, remote=remote, emit=emit))
