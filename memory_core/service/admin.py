"""The routes for operators: API keys (``/v1/keys``) and the home's maintenance
(``/v1/admin/<op>``): the expiry sweep, the index's flush, repair and optimize, a resolver pass,
the extraction queue, the audit check. Admin keys only; a tenant's key gets ``ADMIN_REQUIRED``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response

from ..access import ApiKey
from ..errors import AdminRequired, InvalidInput
from ..inputs import known_options
from ..resolver.actions import ResolverSettings
from ..temporal import parse_instant
from .guards import read_body
from .state import ServiceState, json_response, result_response

if TYPE_CHECKING:
    from .app import Handler

Measured = Callable[[ServiceState, str, "Handler"], Callable[[Request], Awaitable[Response]]]


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
        return {**memory.projector.status(), "queued": memory.index_queued()}

    return {
        "sweep_expired": lambda a: memory.sweep_expired(**a),
        "flush": lambda a: memory.flush(**a),
        "repair_projections": lambda a: memory.repair_projections(**a),
        "optimize_index": lambda a: optimize_index(**a),
        "index_status": lambda a: index_status(**a),
        "reindex": lambda a: memory.reindex(**a),
        "resolve": lambda a: resolve(**a),
        "run_extraction_queue": lambda a: memory.run_extraction_queue(**a),
        "verify_audit": lambda a: memory.verify_audit(**a),
        "pending_projection_failures": lambda a: len(memory.store.projections.pending_projection_failures(**a)),
        "resolver_marks": lambda a: memory.store.ledger.mark_counts(**a),
    }


def register(app: FastAPI, state: ServiceState, measured: Measured) -> None:
    for name, fn in _maintenance(state).items():
        app.add_api_route(
            f"/v1/admin/{name}",
            measured(state, f"admin.{name}", _admin_op(state, fn)),
            methods=["POST"],
            name=f"admin_{name}",
            tags=["admin"],
        )
    app.add_api_route("/v1/keys", measured(state, "keys.create", _create_key(state)), methods=["POST"], tags=["keys"])
    app.add_api_route("/v1/keys", measured(state, "keys.list", _list_keys(state)), methods=["GET"], tags=["keys"])
    app.add_api_route(
        "/v1/keys/{key_id}/revoke", measured(state, "keys.revoke", _revoke_key(state)), methods=["POST"], tags=["keys"]
    )


def _admin_op(state: ServiceState, fn: Callable[[dict[str, Any]], Any]) -> "Handler":
    async def handle(request: Request, key: ApiKey) -> Response:
        _admin(key)
        body = await read_body(request, state.settings.max_body_bytes)
        try:
            return result_response(await state.run(lambda: fn(body)))
        except TypeError as exc:  # an argument the op does not take
            raise InvalidInput(f"{exc}", field="body") from None

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
