"""The remote Memory tool: the same methods, arguments, answers and typed errors as ``MemoryTool``,
served by a memory service over HTTP.

    with RemoteMemory("http://127.0.0.1:8765", key) as remote:
        tool = remote.tool()
        tool.set("medication", "ibuprofen", valid_at="2024-03-01T00:00:00Z")
        tool.get("medication")          # a FactVersion, as in-process

Arguments are checked here by the library's own validation boundary (so a bad one is refused
before it is sent, with the error an in-process call raises), then checked again by the service.
The caller's identity is the key's; ``session`` and ``run`` label the provenance of its writes.
"""

from __future__ import annotations

import inspect
import json
from typing import Any, Callable, Mapping
from urllib.parse import quote

from ..api.ops import LOCAL_ONLY, TOOL_OPS, Op
from ..api.tool import MemoryTool
from ..api.validate import TOOL_RULES, guard_ops
from ..audit import AuditReport
from ..erasure import ErasureRequest
from ..errors import InvalidInput, MemcoreError, ServiceUnavailable
from ..identity import Identity, Namespace, Scope
from ..model import FactVersion
from ..resolver.actions import PassReport
from ..values import canonical_json
from ..webhooks import Webhook
from ..wire import decode, decode_any, encode, raise_error
from .connections import Answer, ConnectionPool, HttpxWire, Unanswered, json_body, query_string

SESSION_HEADER = "X-Memcore-Session"
RUN_HEADER = "X-Memcore-Run"
MODEL_HEADER = "X-Memcore-Model"


class RemoteMemory:
    """A memory service, reached with one API key. ``tool()`` is the Memory tool of the key's
    identity; the other methods are the home's maintenance, for admin keys."""

    def __init__(
        self,
        url: str,
        key: str,
        *,
        timeout: float = 60.0,
        session: str | None = None,
        run: str | None = None,
        model: str | None = None,
        transport: Any = None,
    ) -> None:
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise InvalidInput(f"the service URL must be http(s)://host:port, got {url!r}", field="url")
        if not isinstance(key, str) or not key:
            raise InvalidInput("an API key is required (memcore keys create)", field="key")
        headers = {"Authorization": f"Bearer {key}"}
        if session:
            headers[SESSION_HEADER] = session
        if run:
            headers[RUN_HEADER] = run
        if model:
            headers[MODEL_HEADER] = model
        self.url = url.rstrip("/")
        self.session, self.run, self.model = session, run, model
        # The standard library's keep-alive connections; an ``httpx`` transport sends through httpx.
        self._wire = (
            ConnectionPool(self.url, headers, timeout)
            if transport is None
            else HttpxWire(self.url, headers, timeout, transport)
        )

    # -- the wire ------------------------------------------------------------------------------

    def call(self, path: str, body: Mapping[str, Any] | None = None, *, method: str = "POST") -> Any:
        """One request; its ``result`` in wire form, or the typed error the service answered."""
        if method == "GET":
            answer = self._send("GET", path + query_string(body))
        else:
            answer = self._send(method, path, json_body(body))
        try:
            doc = json.loads(answer.body)
        except ValueError:
            doc = None
        if answer.status >= 400 or not isinstance(doc, dict) or "result" not in doc:
            raise_error(doc if isinstance(doc, dict) else {}, answer.status)
        return doc["result"]

    def _send(self, method: str, path: str, body: bytes | None = None) -> Answer:
        try:
            return self._wire.request(method, path, body)
        except Unanswered as exc:
            if exc.timed_out:
                raise ServiceUnavailable(
                    f"the memory service at {self.url} did not answer in time", url=self.url
                ) from None
            raise ServiceUnavailable(
                f"the memory service at {self.url} could not be reached ({exc.reason})", url=self.url
            ) from None

    def health(self) -> dict[str, Any]:
        try:
            return json.loads(self._send("GET", "/healthz").body)
        except ValueError:
            raise ServiceUnavailable(f"the memory service at {self.url} could not be reached", url=self.url) from None

    def whoami(self) -> dict[str, Any]:
        return self.call("/v1/whoami", method="GET")

    def tool(self) -> "RemoteTool":
        """The Memory tool of this key's identity."""
        me = self.whoami()
        identity = Identity(
            tenant=me["tenant"],
            user=me["user"],
            agent=me["agent"],
            session=self.session,
            run=self.run,
            model=self.model,
            memory_scopes=frozenset(Scope(s) for s in me["memory_scopes"]),
            sql_scopes=frozenset(Scope(s) for s in me["sql_scopes"]),
            admin=me["admin"],
        )
        return RemoteTool(self, identity)

    # -- the home's maintenance (admin keys) ---------------------------------------------------

    def _call_admin(self, op: str, **args: Any) -> Any:
        """An admin op's answer as sent (for ``decode`` into the op's own type)."""
        return self.call(f"/v1/admin/{op}", encode({k: v for k, v in args.items() if v is not None}))

    def _admin(self, op: str, **args: Any) -> Any:
        return decode_any(self._call_admin(op, **args))

    def sweep_expired(self) -> dict[str, int]:
        return self._admin("sweep_expired")

    def flush(self) -> int:
        return self._admin("flush")

    def repair_projections(self) -> int:
        return self._admin("repair_projections")

    def optimize_index(self) -> dict[str, Any]:
        return self._admin("optimize_index")

    def index_status(self) -> dict[str, Any]:
        return self._admin("index_status")

    def reindex(self) -> int:
        return self._admin("reindex")

    def resolve(self, *, floor: float | None = None, batch: int | None = None) -> PassReport:
        """One conflict-resolver pass with the service's judge (the offline rule judge)."""
        return decode(PassReport, self.call("/v1/admin/resolve", encode({"floor": floor, "batch": batch})))

    def run_extraction_queue(self, *, limit: int = 8, lease_s: float = 300.0) -> dict[str, int]:
        return self._admin("run_extraction_queue", limit=limit, lease_s=lease_s)

    def observe_extract(self, *, limit: int = 8, lease_s: float = 300.0) -> dict[str, Any]:
        """Replay crystallized observation sessions with the service home's extractor."""
        return self._admin("observe_extract", limit=limit, lease_s=lease_s)

    def verify_audit(self) -> AuditReport:
        return decode(AuditReport, self.call("/v1/admin/verify_audit"))

    # The background workers (docs/workers.md); apply=False reports what a run would do.
    def reconcile_orphan_vectors(self, *, apply: bool = True) -> dict[str, Any]:
        return self._admin("reconcile_orphan_vectors", apply=apply)

    def sweep_sensitivity(self, *, apply: bool = True) -> dict[str, Any]:
        return self._admin("sweep_sensitivity", apply=apply)

    def recalibrate(self, *, apply: bool = True) -> list[dict[str, Any]]:
        return self._admin("recalibrate", apply=apply)

    def detect_communities(self, *, apply: bool = True) -> dict[str, Any]:
        return self._admin("detect_communities", apply=apply)

    def build_profiles(self, *, apply: bool = True) -> dict[str, Any]:
        return self._admin("build_profiles", apply=apply)

    def summarize_sessions(self, *, apply: bool = True) -> dict[str, Any]:
        """Session summaries with the service home's summarizer (its offline rules)."""
        return self._admin("summarize_sessions", apply=apply)

    def fold_usage(self, *, apply: bool = True) -> dict[str, Any]:
        return self._admin("fold_usage", apply=apply)

    def fill_embeddings(self, *, apply: bool = True, limit: int = 256, max_attempts: int = 3) -> dict[str, Any]:
        return self._admin("fill_embeddings", apply=apply, limit=limit, max_attempts=max_attempts)

    def erase(
        self,
        tenant: str,
        *,
        user: str | None = None,
        agent: str | None = None,
        namespaces: list[str] | None = None,
    ) -> ErasureRequest:
        """``Memory.erase`` on the service's home; the actor is this client's admin key."""
        return decode(
            ErasureRequest, self._call_admin("erase", tenant=tenant, user=user, agent=agent, namespaces=namespaces)
        )

    def erasures(self, request_id: str | None = None) -> list[ErasureRequest]:
        return decode(list[ErasureRequest], self._call_admin("erasures", request_id=request_id))

    def recover_erasures(self, *, max_attempts: int = 3) -> dict[str, int]:
        return self._admin("recover_erasures", max_attempts=max_attempts)

    def webhook_register(
        self, tenant: str, url: str, *, events: list[str] | None = None, secret: str | None = None
    ) -> Webhook:
        """``Memory.webhook_register`` on the service's home: the answer holds the secret."""
        return decode(
            Webhook, self._call_admin("webhook_register", tenant=tenant, url=url, events=events, secret=secret)
        )

    def webhook_rotate(self, tenant: str, webhook_id: str, *, secret: str | None = None) -> Webhook:
        return decode(Webhook, self._call_admin("webhook_rotate", tenant=tenant, webhook_id=webhook_id, secret=secret))

    def webhook_remove(self, tenant: str, webhook_id: str) -> Webhook:
        return decode(Webhook, self._call_admin("webhook_remove", tenant=tenant, webhook_id=webhook_id))

    def webhooks(self, tenant: str | None = None) -> list[Webhook]:
        return decode(list[Webhook], self._call_admin("webhooks", tenant=tenant))

    def deliver_webhooks(self) -> dict[str, int]:
        return self._admin("deliver_webhooks")

    def webhook_deliveries(self, webhook_id: str | None = None) -> list[dict[str, Any]]:
        return self._admin("webhook_deliveries", webhook_id=webhook_id)

    def pending_projection_failures(self) -> int:
        return self._admin("pending_projection_failures")

    def resolver_marks(self) -> dict[str, Any]:
        return self._admin("resolver_marks")

    # -- the home's named reads (admin keys): what notebooks and sensors look at ----------------

    def catalog(self) -> list[tuple[str, str, str, str]]:
        """Every (tenant, scope, owner_id, key) the home holds, sorted."""
        return decode(list[tuple[str, str, str, str]], self.call("/v1/admin/catalog"))

    def tenants(self) -> list[str]:
        return decode(list[str], self.call("/v1/admin/tenants"))

    def history(self, namespace: Namespace, key: str) -> list[FactVersion]:
        """Every version row of ``key`` in ``namespace``, oldest first."""
        return decode(list[FactVersion], self.call("/v1/admin/history", {**_where(namespace), "key": key}))

    def resolver_records(self, namespace: Namespace | None = None) -> list[dict[str, Any]]:
        """What the conflict resolver recorded (in ``namespace``; none: the whole home)."""
        body = _where(namespace) if namespace is not None else None
        return decode(list[dict[str, Any]], self.call("/v1/admin/resolver_records", body))

    def conflicted_namespaces(self) -> list[tuple[str, str, str]]:
        """Every (tenant, scope, owner_id) holding a conflicted fact now."""
        return decode(list[tuple[str, str, str]], self.call("/v1/admin/conflicted_namespaces"))

    def queue_state(self) -> tuple[str, dict[str, int]]:
        """The extraction queue's cursor (changes only when work is added) and backlog by kind:status."""
        state = self.call("/v1/admin/queue_state")
        return state["cursor"], decode(dict[str, int], state["backlog"])

    # -- a reviewer's work on one namespace (admin keys) -----------------------------------------

    def review_queue(self, namespace: Namespace) -> list[Any]:
        """The namespace's conflicted rows, each with its flagged peers and what judges said."""
        return decode(TOOL_OPS["review_queue"].returns, self.call("/v1/admin/review_queue", _where(namespace)))

    def resolve_conflict(self, namespace: Namespace, key: str, peer_key: str, decision: str) -> Any:
        """A reviewer's decision on a flagged pair (``retire_peer`` or ``clear``), as the admin key."""
        body = {**_where(namespace), "key": key, "peer_key": peer_key, "decision": decision}
        return decode(TOOL_OPS["resolve_conflict"].returns, self.call("/v1/admin/resolve_conflict", body))

    def restore(self, namespace: Namespace, key: str) -> Any:
        """Undo the latest delete, reject, expiry or retirement of ``key`` in ``namespace``."""
        body = {**_where(namespace), "key": key}
        return decode(TOOL_OPS["restore"].returns, self.call("/v1/admin/restore", body))

    # -- keys (admin keys) ---------------------------------------------------------------------

    def create_key(self, tenant: str, **options: Any) -> tuple[str, dict[str, Any]]:
        """A new key for ``tenant`` (user, agent, memory_scopes, sql_scopes, admin, label,
        expires_at): (its token, shown once; its summary)."""
        made = self.call("/v1/keys", encode({"tenant": tenant, **options}))
        return made.pop("key"), made

    def list_keys(self, tenant: str | None = None) -> list[dict[str, Any]]:
        return self.call("/v1/keys", {"tenant": tenant} if tenant else None, method="GET")

    def revoke_key(self, key_id: str) -> dict[str, Any]:
        return self.call(f"/v1/keys/{quote(str(key_id), safe='')}/revoke")

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        self._wire.close()

    def __enter__(self) -> "RemoteMemory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _where(namespace: Namespace) -> dict[str, str]:
    if not isinstance(namespace, Namespace):
        raise InvalidInput(f"expected a Namespace, got {type(namespace).__name__}", field="namespace")
    return {"tenant": namespace.tenant, "scope": Scope(namespace.scope).value, "owner_id": namespace.owner_id}


class _RemoteToolBase:
    def __init__(self, remote: RemoteMemory, identity: Identity) -> None:
        self._remote = remote
        self.identity = identity
        self.origin = "memcore.client"

    def __repr__(self) -> str:
        return f"RemoteTool({self._remote.url!r}, tenant={self.identity.tenant!r})"


def _remote_op(op: Op) -> Callable[..., Any]:
    local = getattr(MemoryTool, op.name)
    signature = inspect.signature(local)
    spread = [n for n, p in signature.parameters.items() if p.kind is p.VAR_KEYWORD]

    def call(self: _RemoteToolBase, *args: Any, **kwargs: Any) -> Any:
        arguments = dict(signature.bind(self, *args, **kwargs).arguments)
        arguments.pop("self")
        for name in spread:
            arguments.update(arguments.pop(name, {}))
        local_only = sorted(n for n in LOCAL_ONLY if arguments.pop(n, None) is not None)
        if local_only:
            raise InvalidInput(
                f"{op.name}: {', '.join(local_only)} is a Python object; a remote tool uses the service's",
                field=local_only[0],
            )
        if "value" in arguments:  # refused here as in-process (a set, NaN, ...), not turned into a list
            canonical_json(arguments["value"])
        try:
            body = encode(arguments)
        except (TypeError, RecursionError) as exc:
            raise InvalidInput(f"{op.name}: an argument cannot be sent ({exc})", field=op.name) from None
        return decode(op.returns, self._remote.call(f"/v1/{op.name}", body))

    call.__name__ = call.__qualname__ = op.name
    call.__doc__ = op.doc
    call.__signature__ = signature  # the validation boundary and help() read it
    call.__annotations__ = dict(local.__annotations__)
    return call


RemoteTool = guard_ops(TOOL_RULES)(
    type(
        "RemoteTool",
        (_RemoteToolBase,),
        {name: _remote_op(op) for name, op in TOOL_OPS.items()}
        | {"__doc__": "The Memory tool of one API key's identity, served by a memory service."},
    )
)

__all__ = ["MemcoreError", "RemoteMemory", "RemoteTool"]
