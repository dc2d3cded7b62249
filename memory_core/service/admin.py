"""The routes for operators: API keys (``/v1/keys``) and the home's maintenance
(``/v1/admin/<op>``): the expiry sweep, the index's flush, repair and optimize, a resolver pass,
the extraction queue, the audit check; the named reads that notebooks and sensors look at (the
catalog of keys, a key's history in a namespace, the resolver's records, the conflicted
namespaces, the queue's state, the tenants); erasure and change webhooks; and a
reviewer's work on one namespace (its review
queue, a decision on a flagged pair, a restore). Admin keys only; a tenant's key gets
``ADMIN_REQUIRED``. Every read is a named read of a port, never SQL."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response

from ..access import ApiKey
from ..errors import AdminRequired, InvalidInput
from ..identity import Namespace, Scope, reviewer_identity
from ..inputs import known_options
from ..resolver.actions import ResolverSettings
from ..temporal import parse_instant
from ..webhooks import Webhook
from .guards import read_body
from .state import ServiceState, json_response

if TYPE_CHECKING:
    from .app import Handler

Measured = Callable[[ServiceState, str, "Handler"], Callable[[Request], Awaitable[Response]]]
AdminOp = Callable[[dict[str, Any], ApiKey], Any]


def _admin(key: ApiKey) -> None:
    if not key.admin:
        raise AdminRequired("this route needs an admin key")


def _maintenance(state: ServiceState) -> dict[str, Callable[[dict[str, Any]], Any]]:
    memory = state.memory

    def resolve(floor: float | None = None, batch: int | None = None) -> Any:
        settings = ResolverSettings()
        if floor is not None or batch is not None:
            settings = ResolverSettings(
                floor=settings.floor if floor is None else floor, batch=settings.batch if batch is None else batch
            )
        return memory.resolve(settings=settings)

    def optimize_index() -> Any:
        return memory.projector.optimize()

    def index_status() -> Any:
        follower = memory.session.follower  # over a shared authority: the other replicas' writes not yet replayed
        behind = {"behind": follower.behind()} if follower is not None else {}
        return {**memory.projector.status(), "queued": memory.index_queued(), **behind}

    return {
        "sweep_expired": lambda a: memory.sweep_expired(**a),
        "flush": lambda a: memory.flush(**a),
        "repair_projections": lambda a: memory.repair_projections(**a),
        "optimize_index": lambda a: optimize_index(**a),
        "index_status": lambda a: index_status(**a),
        "reindex": lambda a: memory.reindex(**a),
        "resolve": lambda a: resolve(**a),
        "run_extraction_queue": lambda a: memory.run_extraction_queue(**a),
        "observe_extract": lambda a: memory.observe_extract(**a),  # the service's extractor: the home's
        "verify_audit": lambda a: memory.verify_audit(**a),
        "pending_projection_failures": lambda a: len(memory.store.projections.pending_projection_failures(**a)),
        "resolver_marks": lambda a: memory.store.ledger.mark_counts(**a),
        "reconcile_orphan_vectors": lambda a: memory.reconcile_orphan_vectors(**a),
        "sweep_sensitivity": lambda a: memory.sweep_sensitivity(**a),
        "recalibrate": lambda a: memory.recalibrate(**a),
        "detect_communities": lambda a: memory.detect_communities(**a),
        "build_profiles": lambda a: memory.build_profiles(**a),
        "summarize_sessions": lambda a: memory.summarize_sessions(**a),  # the offline rules: no model crosses
        "fold_usage": lambda a: memory.fold_usage(**a),
        "fill_embeddings": lambda a: memory.fill_embeddings(**a),
    }


def _text(value: Any, field: str) -> str:
    if not isinstance(value, str) or not value:
        raise InvalidInput(f"{field} must be a non-empty text", field=field)
    return value


def _namespace(tenant: Any, scope: Any, owner_id: Any) -> Namespace:
    """The namespace a body names: (tenant, scope, owner_id), each checked."""
    try:
        where = Scope(scope)
    except ValueError:
        allowed = ", ".join(s.value for s in Scope)
        raise InvalidInput(f"scope must be one of {allowed}, got {scope!r}", field="scope") from None
    return Namespace(_text(tenant, "tenant"), where, _text(owner_id, "owner_id"))


def _reads(state: ServiceState) -> dict[str, Callable[[dict[str, Any]], Any]]:
    """The home's named reads for notebooks and sensors (a port's read each, never SQL)."""
    store = state.memory.store

    def catalog() -> Any:
        return store.inspection.catalog()

    def tenants() -> Any:
        return store.inspection.tenants()

    def history(tenant: Any = None, scope: Any = None, owner_id: Any = None, key: Any = None) -> Any:
        return store.versions.history(_namespace(tenant, scope, owner_id), _text(key, "key"))

    def resolver_records(tenant: Any = None, scope: Any = None, owner_id: Any = None) -> Any:
        if tenant is None and scope is None and owner_id is None:
            return store.ledger.resolver_records()
        return store.ledger.resolver_records(_namespace(tenant, scope, owner_id))

    def conflicted_namespaces() -> Any:
        return store.versions.conflicted_namespaces()

    def queue_state() -> Any:
        return {"cursor": store.queue.queue_cursor(), "backlog": store.queue.queue_backlog()}

    return {
        "catalog": lambda a: catalog(**a),
        "tenants": lambda a: tenants(**a),
        "history": lambda a: history(**a),
        "resolver_records": lambda a: resolver_records(**a),
        "conflicted_namespaces": lambda a: conflicted_namespaces(**a),
        "queue_state": lambda a: queue_state(**a),
    }


def _reviews(state: ServiceState) -> dict[str, AdminOp]:
    """A reviewer's work on one namespace, as that namespace's reviewer identity (what the review
    queue notebook does on a home it opens); the reviewer recorded is the admin key."""

    def reviewer(caller: ApiKey, tenant: Any, scope: Any, owner_id: Any) -> tuple[Any, Scope]:
        where = _namespace(tenant, scope, owner_id)
        identity = reviewer_identity(where.tenant, where.scope.value, where.owner_id, f"key:{caller.key_id}")
        return state.tool(identity, origin="memcore.service.review"), where.scope

    def review_queue(caller: ApiKey, tenant: Any = None, scope: Any = None, owner_id: Any = None) -> Any:
        tool, where = reviewer(caller, tenant, scope, owner_id)
        return tool.review_queue(scope=where)

    def resolve_conflict(
        caller: ApiKey,
        tenant: Any = None,
        scope: Any = None,
        owner_id: Any = None,
        key: Any = None,
        peer_key: Any = None,
        decision: Any = None,
    ) -> Any:
        tool, where = reviewer(caller, tenant, scope, owner_id)
        return tool.resolve_conflict(key, peer_key, decision, scope=where)

    def restore(caller: ApiKey, tenant: Any = None, scope: Any = None, owner_id: Any = None, key: Any = None) -> Any:
        tool, where = reviewer(caller, tenant, scope, owner_id)
        return tool.restore(key, scope=where)

    return {
        "review_queue": lambda a, caller: review_queue(caller, **a),
        "resolve_conflict": lambda a, caller: resolve_conflict(caller, **a),
        "restore": lambda a, caller: restore(caller, **a),
    }


def _unsigned(hook: Webhook) -> Webhook:
    """A webhook as a list shows it: its secret is shown once, by register and rotate."""
    return dataclasses.replace(hook, secret="")


def _operators(state: ServiceState) -> dict[str, AdminOp]:
    """Erasure (``docs/erasure.md``; the saga runs in the service, which holds the home, so its
    caches go with the rows) and change webhooks (``docs/webhooks.md``); the actor recorded is
    the admin key."""
    memory = state.memory

    def erase(caller: ApiKey, tenant: Any = None, user: Any = None, agent: Any = None, namespaces: Any = None) -> Any:
        actor = f"key:{caller.key_id}"
        return memory.erase(tenant, user=user, agent=agent, namespaces=namespaces, actor=actor)

    def recover(caller: ApiKey, max_attempts: Any = 3) -> Any:
        return memory.recover_erasures(max_attempts=max_attempts, actor=f"key:{caller.key_id}")

    def register(caller: ApiKey, tenant: Any = None, url: Any = None, events: Any = None, secret: Any = None) -> Any:
        return memory.webhook_register(tenant, url, events=events, secret=secret, actor=f"key:{caller.key_id}")

    def rotate(caller: ApiKey, tenant: Any = None, webhook_id: Any = None, secret: Any = None) -> Any:
        return memory.webhook_rotate(tenant, webhook_id, secret=secret, actor=f"key:{caller.key_id}")

    def remove(caller: ApiKey, tenant: Any = None, webhook_id: Any = None) -> Any:
        return _unsigned(memory.webhook_remove(tenant, webhook_id, actor=f"key:{caller.key_id}"))

    return {
        "erase": lambda a, caller: erase(caller, **a),
        "erasures": lambda a, _caller: memory.erasures(**a),
        "recover_erasures": lambda a, caller: recover(caller, **a),
        "webhook_register": lambda a, caller: register(caller, **a),
        "webhook_rotate": lambda a, caller: rotate(caller, **a),
        "webhook_remove": lambda a, caller: remove(caller, **a),
        "webhooks": lambda a, _caller: [_unsigned(w) for w in memory.webhooks(**a)],
        "deliver_webhooks": lambda a, caller: memory.deliver_webhooks(worker=f"key:{caller.key_id}", **a),
        "webhook_deliveries": lambda a, _caller: memory.webhook_deliveries(**a),
    }


def _any_caller(fn: Callable[[dict[str, Any]], Any]) -> AdminOp:
    """An op whose answer does not depend on which admin key asks."""
    return lambda args, _caller: fn(args)


def register(app: FastAPI, state: ServiceState, measured: Measured) -> None:
    ops = {name: _any_caller(fn) for name, fn in {**_maintenance(state), **_reads(state)}.items()}
    ops.update(_reviews(state))
    ops.update(_operators(state))
    for name, op in ops.items():
        app.add_api_route(
            f"/v1/admin/{name}",
            measured(state, f"admin.{name}", _admin_op(state, name, op)),
            methods=["POST"],
            name=f"admin_{name}",
            tags=["admin"],
        )
    app.add_api_route("/v1/keys", measured(state, "keys.create", _create_key(state)), methods=["POST"], tags=["keys"])
    app.add_api_route("/v1/keys", measured(state, "keys.list", _list_keys(state)), methods=["GET"], tags=["keys"])
    app.add_api_route(
        "/v1/keys/{key_id}/revoke", measured(state, "keys.revoke", _revoke_key(state)), methods=["POST"], tags=["keys"]
    )


def _admin_op(state: ServiceState, name: str, fn: AdminOp) -> "Handler":
    async def handle(request: Request, key: ApiKey) -> Response:
        _admin(key)
        body = await read_body(request, state.settings.max_body_bytes)
        try:
            return await state.answer(lambda: fn(body, key))
        except TypeError:  # an argument the op does not take (its message would name our functions)
            given = ", ".join(sorted(body)) or "none"
            raise InvalidInput(f"admin.{name} does not take these arguments (given: {given})", field="body") from None

    return handle


_KEY_FIELDS = ("tenant", "user", "agent", "memory_scopes", "sql_scopes", "admin", "label", "expires_at")


def _create_key(state: ServiceState) -> "Handler":
    async def handle(request: Request, key: ApiKey) -> Response:
        _admin(key)
        body = await read_body(request, state.settings.max_body_bytes)
        known_options(body, _KEY_FIELDS, "keys.create")
        if not isinstance(body.get("tenant"), str):
            raise InvalidInput("a key needs its tenant", field="tenant")
        if body.get("expires_at") is not None:
            body["expires_at"] = parse_instant(body["expires_at"], "expires_at")
        created_by = f"key:{key.key_id}"
        token, made = await state.run(lambda: state.memory.keys.create(**body, created_by=created_by))
        return json_response({"result": {"key": token, **made.summary(state.memory.clock.now())}}, 201)

    return handle


def _list_keys(state: ServiceState) -> "Handler":
    async def handle(request: Request, key: ApiKey) -> Response:
        _admin(key)
        tenant = request.query_params.get("tenant")
        now = state.memory.clock.now()
        keys = await state.run(lambda: state.memory.keys.list(tenant))
        return json_response({"result": [k.summary(now) for k in keys]})

    return handle


def _revoke_key(state: ServiceState) -> "Handler":
    async def handle(request: Request, key: ApiKey) -> Response:
        _admin(key)
        key_id = request.path_params["key_id"]
        revoked = await state.run(lambda: state.memory.keys.revoke(key_id, actor=f"key:{key.key_id}"))
        return json_response({"result": revoked.summary(state.memory.clock.now())})

    return handle
