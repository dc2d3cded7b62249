"""The memory service's verbs: serve the home over HTTP, its API keys, and the MCP server."""

from __future__ import annotations

import argparse
import http.client
import math
import re
import signal
import threading
import time
from contextlib import contextmanager
from types import FrameType
from typing import Any, Callable, Iterator
from urllib.parse import urlsplit

from ..environment import resolve_service
from ..errors import IdentityIncomplete, InvalidInput, MemcoreError, NotFound
from ..inputs import utf8
from ..temporal import parse_instant
from .io import LLM_ARGS, embedder_of, llm_of
from .registry import ALREADY_ANSWERED, Call, Output, UsageError, arg, verb
from .remote import connect, refuse_identity
from .verbs_eval import ExtraMissing

SERVICE_EXTRA = "pip install 'memory_core[service]'"


class ListenFailed(MemcoreError):
    """The service could not listen where it was told (the port is taken, the host is not this
    machine's)."""

    status = 409
    code = "LISTEN_FAILED"


_HOST = re.compile(r"[A-Za-z0-9.:-]{1,253}")
MAX_RESIDENT_VECTORS_MB = 2**30  # Memory.prewarm_index's vector budget: at most 2**50 bytes


class _Stopped(Exception):
    """SIGTERM or SIGINT, outside the server's own handling of them."""


@contextmanager
def _stop_on_signals() -> Iterator[list[int]]:
    """SIGTERM and SIGINT stop ``serve`` with exit 0. While the server runs it handles them itself
    (uvicorn's graceful shutdown, after which uvicorn raises the signal again for the handler it
    found: should that reach this one, it ends ``serve`` here too). One that comes while the home
    is being opened, before the server takes over, ends ``serve`` here instead of killing the
    process (SIGTERM) or raising KeyboardInterrupt (SIGINT)."""
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():  # signals reach the main thread only
        yield caught
        return

    def stop(signum: int, frame: FrameType | None) -> None:
        caught.append(signum)
        raise _Stopped()

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield caught
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _settings(args: argparse.Namespace) -> dict[str, Any]:
    """``ServiceSettings``' fields from the command line, each checked."""

    def number(value: float, flag: str, low: float, low_ok: bool, high: float = math.inf) -> float:
        if not math.isfinite(value) or value < low or (value == low and not low_ok) or value > high:
            bound = f"at least {low:g}" if low_ok else f"more than {low:g}"
            bound += f" and at most {high:g}" if high < math.inf else ""
            raise InvalidInput(f"{flag} must be a finite number {bound}, got {value!r}", field=flag.lstrip("-"))
        return value

    if not _HOST.fullmatch(args.host):
        raise InvalidInput(f"--host is a host name or an IP address, got {args.host!r}", field="host")
    if not 0 <= args.port <= 65535:
        raise InvalidInput(f"--port must be 0 (a free port) to 65535, got {args.port}", field="port")
    settings: dict[str, Any] = {}
    if args.max_body_bytes is not None:
        settings["max_body_bytes"] = int(number(args.max_body_bytes, "--max-body-bytes", 1, True))
    if args.request_timeout is not None:
        settings["request_timeout_s"] = number(args.request_timeout, "--request-timeout", 0, False)
    if args.rate_limit is not None:
        settings["rate_per_s"] = number(args.rate_limit, "--rate-limit", 0, True)
    if args.rate_burst is not None:
        settings["rate_burst"] = int(number(args.rate_burst, "--rate-burst", 1, True))
    if args.drain_timeout is not None:
        settings["drain_timeout_s"] = number(args.drain_timeout, "--drain-timeout", 0, True)
    if args.upkeep_interval is not None:
        settings["upkeep_interval_s"] = number(args.upkeep_interval, "--upkeep-interval", 0, True)
    if args.no_prewarm:
        settings["prewarm_index"] = False
    if args.resident_vectors_mb is not None:
        megabytes = number(args.resident_vectors_mb, "--resident-vectors-mb", 0, True, MAX_RESIDENT_VECTORS_MB)
        settings["resident_vector_bytes"] = int(megabytes * 2**20)
    if args.blas_threads is not None:
        threads = int(number(args.blas_threads, "--blas-threads", 0, True))
        settings["blas_threads"] = threads or None
    if args.no_gc_freeze:
        settings["freeze_survivors"] = False
    if args.webhook_interval is not None:
        settings["webhook_interval_s"] = number(args.webhook_interval, "--webhook-interval", 0, True)
    if args.webhook_lease is not None:
        settings["webhook_lease_s"] = number(args.webhook_lease, "--webhook-lease", 0, False)
    return settings


@verb(
    "serve",
    "serve the home over HTTP (the memory service, /v1) until SIGTERM or SIGINT",
    arg("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)"),
    arg("--port", type=int, default=8765, help="the port (default 8765; 0: a free one)"),
    arg("--max-body-bytes", type=int, metavar="N", help="refuse a request body over N bytes (default 16 MiB)"),
    arg("--request-timeout", type=float, metavar="S", help="answer REQUEST_TIMEOUT after S seconds (default 60)"),
    arg("--rate-limit", type=float, metavar="R", help="requests a second per key, on average (default 1000; 0: none)"),
    arg("--rate-burst", type=int, metavar="B", help="requests per key at once (default 2000)"),
    arg("--drain-timeout", type=float, metavar="S", help="on stop, wait S seconds for running ops (default 30)"),
    arg(
        "--upkeep-interval",
        type=float,
        metavar="S",
        help="write, settle and fold the index every S seconds between requests (default 0.02; 0: never)",
    ),
    arg(
        "--webhook-interval",
        type=float,
        metavar="S",
        help="run a change-webhook delivery pass every S seconds (default 1; 0: never)",
    ),
    arg(
        "--webhook-lease",
        type=float,
        metavar="S",
        help="how long a delivery holds an event; a killed service's events go again after it (default 60)",
    ),
    arg(
        "--no-prewarm",
        action="store_true",
        help="start without loading the index into memory first (faster start; the first searches read from disk)",
    ),
    arg(
        "--resident-vectors-mb",
        type=float,
        metavar="MB",
        help="keep the index's vectors in memory up to MB, and the vector leg's copies as much again "
        "(default 256; 0: never)",
    ),
    arg(
        "--blas-threads",
        type=int,
        metavar="N",
        help="limit NumPy's BLAS to N threads in the service's process (default 1; 0: leave it as it is)",
    ),
    arg(
        "--no-gc-freeze",
        action="store_true",
        help="leave the garbage collector as it is (default: each full collection's survivors are frozen)",
    ),
    arg("--no-access-log", action="store_true", help="no access log line per request on stderr"),
    *LLM_ARGS,
    scope=False,
    identity=False,
    opens_home=False,  # the service opens it, and holds it while it runs
)
def serve(call: Call) -> Output:
    args = call.args
    if getattr(args, "url", None):
        raise UsageError("memcore serve serves the home (--home); --url names a service to call, not one to start")
    settings = _settings(args)
    embedder, options = embedder_of(args)
    options["llm"] = llm_of(args)  # what ask answers through (none: ask is refused)
    try:
        from ..service import ServiceSettings
        from ..service import serve as run_service
    except ModuleNotFoundError as exc:
        raise ExtraMissing(
            f"memcore serve needs {exc.name!r}, which the service extra installs: {SERVICE_EXTRA}"
        ) from None
    announcer = _Announcer(call.emit)
    with _stop_on_signals() as caught:
        try:
            run_service(
                call.home,
                host=args.host,
                port=args.port,
                settings=ServiceSettings(**settings),
                embedder=embedder,
                access_log=not args.no_access_log,
                announce=announcer,
                **options,
            )
        except _Stopped:
            pass
        except OSError as exc:
            if announcer.where is not None:
                raise
            raise ListenFailed(
                f"the memory service cannot listen on {args.host}:{args.port}: {exc.strerror or exc}",
                host=args.host,
                port=args.port,
            ) from None
        finally:
            said = announcer.finish()
    if not said:  # stopped before it answered: say so, as the one document
        name = signal.Signals(caught[0]).name if caught else None
        where = announcer.where or {}
        doc = {"stopped": name, "url": where.get("url"), "pid": where.get("pid"), "home": where.get("home")}
        return doc, f"stopped ({name or 'returned'}) before it answered", 0
    return ALREADY_ANSWERED, "", 0


class _Announcer:
    """``serve``'s announcement, printed once the service answers ``/healthz`` rather than as
    soon as its socket listens: by then the server handles SIGTERM and SIGINT itself, so whoever
    reads the line may stop it at once. (It is printed anyway after ``ANNOUNCE_WAIT_S``, should
    the probe never get through.)"""

    def __init__(self, emit: Callable[[Any], None]) -> None:
        self.emit = emit
        self.where: dict[str, Any] | None = None
        self._lock = threading.Lock()
        self._said = self._done = False
        self._thread: threading.Thread | None = None

    def __call__(self, where: dict[str, Any]) -> None:  # the socket listens
        self.where = where
        self._thread = threading.Thread(target=self._when_answering, name="memcore-announce", daemon=True)
        self._thread.start()

    def _when_answering(self) -> None:
        deadline = time.monotonic() + ANNOUNCE_WAIT_S
        while not self._done and time.monotonic() < deadline and not _answers(self.where["url"]):
            time.sleep(0.02)
        with self._lock:
            if not self._done and not self._said:
                self._said = True
                self.emit(self.where)

    def finish(self) -> bool:
        """The service stopped: no announcement after this. Whether it was made."""
        with self._lock:
            self._done = True
        return self._said


ANNOUNCE_WAIT_S = 10.0


def _answers(url: str) -> bool:
    """Whether the service at ``url`` answers ``GET /healthz`` with 200 (directly: no proxy)."""
    where = urlsplit(url)
    host = {"0.0.0.0": "127.0.0.1", "::": "::1"}.get(where.hostname or "", where.hostname or "127.0.0.1")
    try:
        connection = http.client.HTTPConnection(host, where.port, timeout=1)
        try:
            connection.request("GET", "/healthz")
            return connection.getresponse().status == 200
        finally:
            connection.close()
    except (OSError, http.client.HTTPException, ValueError):
        return False


_KEY_ID = re.compile(r"[0-9a-f]{16}")
_CREATE_ONLY = tuple(  # (argument, its flag)
    (name, "--" + name.removeprefix("key_").replace("_", "-"))
    for name in ("key_user", "key_agent", "key_admin", "memory_scopes", "sql_scopes", "expires", "label")
)


def _scopes(text: str | None, flag: str) -> list[str] | None:
    if text is None:
        return None
    names = [s.strip() for s in text.split(",") if s.strip()]
    if not names:
        raise InvalidInput(f"{flag} names one or more scopes, comma-separated (agent,user,tenant)", field=flag[2:])
    return names


def _key_line(summary: dict[str, Any]) -> str:
    who = "/".join(str(summary[k]) for k in ("tenant", "user", "agent") if summary.get(k))
    extra = " admin" if summary["admin"] else ""
    label = f"  {summary['label']!r}" if summary.get("label") else ""
    expires = f"  expires {summary['expires_at']}" if summary.get("expires_at") else ""
    scopes = ",".join(summary["memory_scopes"])
    return f"{summary['key_id']}  {summary['state']:<7} {who}{extra}  memory={scopes}{expires}{label}"


@verb(
    "keys",
    "the memory service's API keys: create (the key shown once), list, revoke KEY_ID",
    arg("action", choices=["create", "list", "revoke"]),
    arg("key_id", nargs="?", help="revoke: the key's id (key_id in keys list)"),
    arg("--tenant", dest="key_tenant", help="create: the key's tenant (required); list: only this tenant's keys"),
    arg("--user", dest="key_user", help="create: the key's user"),
    arg("--agent", dest="key_agent", help="create: the key's agent"),
    arg("--admin", dest="key_admin", action="store_true", help="create: an admin key (scope global, /v1/admin, keys)"),
    arg("--memory-scopes", help="create: comma-separated scopes it may read and write (default agent,user,tenant)"),
    arg("--sql-scopes", help="create: comma-separated scopes of SQL memory (default agent,user,tenant)"),
    arg("--expires", help="create: when it stops working (ISO-8601 with zone; default never)"),
    arg("--label", help="create: a note for whoever lists the keys"),
    scope=False,
    identity=False,
    writes=lambda args: args.action == "create",  # the first key may be made before the home is served
    remote=True,
)
def keys(call: Call) -> Output:
    args = call.args
    # The key's identity is given after the verb; on a home, before it works too (the run
    # identity options). Through a service those are refused: they would name the caller.
    tenant = args.key_tenant or args.tenant
    for name in ("key_tenant", "tenant", "key_user", "key_agent", "label"):  # the store cannot keep a lone surrogate
        if getattr(args, name):
            utf8(getattr(args, name), name.removeprefix("key_"))
    if args.action == "create":
        if args.key_id is not None:
            raise UsageError("memcore keys create takes no KEY_ID (the key's id is made with it)")
        if not tenant:
            raise IdentityIncomplete("memcore keys create needs --tenant (the tenant the key stands for)")
        expires = args.expires
        parse_instant(expires, "expires")  # malformed or naive: refused before anything is written
        options: dict[str, Any] = {
            "user": args.key_user or args.user,
            "agent": args.key_agent or args.agent,
            "memory_scopes": _scopes(args.memory_scopes, "--memory-scopes"),
            "sql_scopes": _scopes(args.sql_scopes, "--sql-scopes"),
            "admin": args.key_admin or args.admin,
            "label": args.label,
        }
        if call.remote is not None:
            sent = {k: v for k, v in options.items() if v is not None} | ({"expires_at": expires} if expires else {})
            token, summary = call.remote.create_key(tenant, **sent)
        else:
            memory = call.memory
            token, made = memory.keys.create(
                tenant=tenant, expires_at=parse_instant(expires, "expires"), created_by="operator", **options
            )
            summary = made.summary(memory.clock.now())
        text = f"key: {token}\n(shown this once: the home keeps only its hash)\n{_key_line(summary)}"
        return {"key": token, **summary}, text, 0
    named = [flag for dest, flag in _CREATE_ONLY if getattr(args, dest)]
    if named:
        raise UsageError(f"memcore keys {args.action}: {', '.join(named)} only go with keys create")
    if args.action == "list":
        if args.key_id is not None:
            raise UsageError("memcore keys list takes no KEY_ID (--tenant filters)")
        if call.remote is not None:
            found = call.remote.list_keys(tenant)
        else:
            now = call.memory.clock.now()
            found = [k.summary(now) for k in call.memory.keys.list(tenant)]
        return {"count": len(found), "keys": found}, "\n".join(map(_key_line, found)) or "(no keys)", 0
    if args.key_id is None:
        raise UsageError("memcore keys revoke needs KEY_ID (key_id in keys list)")
    if not _KEY_ID.fullmatch(args.key_id):  # not a key id: the answer an unknown one gets, without asking
        raise NotFound("no such API key", key_id=args.key_id)
    # --tenant: only a key of that tenant (another tenant's key is NOT_FOUND, as an unknown one).
    if call.remote is not None:
        if tenant and all(k["key_id"] != args.key_id for k in call.remote.list_keys(tenant)):
            raise NotFound("no such API key", key_id=args.key_id)
        summary = call.remote.revoke_key(args.key_id)
    else:
        memory = call.memory
        summary = memory.keys.revoke(args.key_id, actor="operator", tenant=tenant).summary(memory.clock.now())
    return summary, f"revoked: {_key_line(summary)}", 0


@verb(
    "mcp",
    "serve a memory service's tool to an MCP host over stdio (--url, --key; stdout is the protocol's)",
    arg("--url", dest="url", default=argparse.SUPPRESS, help="the memory service (default: $MEMCORE_URL)"),
    arg("--key", dest="api_key", default=argparse.SUPPRESS, help="its API key (default: $MEMCORE_KEY)"),
    scope=False,
    identity=False,
    opens_home=False,
)
def mcp(call: Call) -> Output:
    args = call.args
    url, key = resolve_service(getattr(args, "url", None), getattr(args, "api_key", None))
    if not url:
        raise UsageError(
            "memcore mcp serves the tool of a memory service: give --url and --key (or MEMCORE_URL, "
            "MEMCORE_KEY); memcore serve starts one"
        )
    refuse_identity(args, url)
    with connect(args, url, key) as remote:
        remote.whoami()  # a wrong URL or key is refused now, not at the host's first call
        try:
            from ..mcp_server import run_stdio
        except ImportError as exc:  # the mcp package, or a build without the MCP server
            raise ExtraMissing(f"memcore mcp needs the MCP server ({exc}): {SERVICE_EXTRA}") from None
        run_stdio(remote.tool)
    return ALREADY_ANSWERED, "", 0
