"""remember's routes under the names its seed gives them, beside the tool's own (``POST
/v1/get_context``, ``/v1/capture``, ``/v1/retrieval_feedback``):

- ``POST /v1/context`` (a JSON body of ``get_context``'s arguments) and ``GET /v1/context``
  (query parameters: ``lens`` and ``scope`` repeated, ``frame``, ``token_budget``, ``query``,
  ``passes``, ``include_index``);
- ``POST /v1/captures``: a capture envelope;
- ``POST /v1/retrieval-feedback``: ``{interaction_id, ref, verdict}``;
- ``GET /v1/receipt-keys``: the public keys that verify receipts.

Each is the tool op it names, with the same identity rule (the key's alone) and the same answers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Awaitable, Callable

from fastapi import FastAPI
from starlette.requests import Request
from starlette.responses import Response

from ..access import ApiKey, refuse_identity_fields
from ..api.ops import TOOL_OPS
from ..errors import InvalidInput
from ..inputs import known_options
from .state import ServiceState

if TYPE_CHECKING:
    from .app import Handler

Measured = Callable[[ServiceState, str, "Handler"], Callable[[Request], Awaitable[Response]]]

ALIASES = {"context": "get_context", "captures": "capture", "retrieval-feedback": "retrieval_feedback"}
_CONTEXT_QUERY = ("lens", "scope", "frame", "token_budget", "query", "passes", "include_index")


def _whole(value: str, field: str) -> int:
    if not value.isdigit():
        raise InvalidInput(f"{field} must be a whole number", field=field)
    return int(value)


def context_arguments(params: Any) -> dict[str, Any]:
    """``get_context``'s arguments from ``GET /v1/context``'s query parameters."""
    known_options(params.keys(), _CONTEXT_QUERY, "a /v1/context parameter")
    args: dict[str, Any] = {}
    if params.getlist("lens"):
        args["lenses"] = params.getlist("lens")
    if params.getlist("scope"):
        args["scopes"] = params.getlist("scope")
    if "frame" in params:
        args["frame_id"] = params["frame"]
    if "query" in params:
        args["query"] = params["query"]
    for name in ("token_budget", "passes"):
        if name in params:
            args[name] = _whole(params[name], name)
    if "include_index" in params:
        flag = params["include_index"].lower()
        if flag not in ("true", "false", "1", "0"):
            raise InvalidInput("include_index must be true or false", field="include_index")
        args["include_index"] = flag in ("true", "1")
    return args


def register(app: FastAPI, state: ServiceState, measured: Measured, tool_handler: Callable[..., "Handler"]) -> None:
    for alias, name in ALIASES.items():
        op = TOOL_OPS[name]
        app.add_api_route(
            f"/v1/{alias}",
            measured(state, name, tool_handler(state, op)),
            methods=["POST"],
            name=f"{name} ({alias})",
            summary=f"{op.doc.splitlines()[0]} (the seed's name for {name})",
            tags=["remember"],
        )

    async def context_get(request: Request, key: ApiKey) -> Response:
        refuse_identity_fields(request.query_params, "query")
        args = context_arguments(request.query_params)
        tool = state.request_tool(key, request)
        return await state.answer(lambda: tool.get_context(**args), TOOL_OPS["get_context"].returns)

    async def receipt_keys(request: Request, key: ApiKey) -> Response:
        tool = state.tool(key.identity(), origin="memcore.service")
        return await state.answer(tool.receipt_keys, TOOL_OPS["receipt_keys"].returns)

    app.add_api_route(
        "/v1/context",
        measured(state, "get_context", context_get),
        methods=["GET"],
        summary="get_context with query parameters (lens, scope repeated; frame, token_budget, query, ...)",
        tags=["remember"],
    )
    app.add_api_route(
        "/v1/receipt-keys",
        measured(state, "receipt_keys", receipt_keys),
        methods=["GET"],
        summary="The public keys that verify this home's receipts, by key id",
        tags=["remember"],
    )
