"""The OpenAPI description of each op: its request body (the op's arguments, from its signature)
and its answer (from its return type). Only the description: the body is parsed and checked by
the library's own validation boundary, so the service refuses exactly what the library refuses."""

from __future__ import annotations

import inspect
import typing
from typing import Any, Iterable

from pydantic import ConfigDict, TypeAdapter, create_model
from pydantic.errors import PydanticUserError

from ..api.ops import Op
from ..api.tool import MemoryTool

REF = "#/components/schemas/{model}"


def _field_type(annotation: Any) -> Any:
    try:
        TypeAdapter(annotation).json_schema()
        return annotation
    except (PydanticUserError, TypeError, ValueError, NameError, AttributeError):
        return Any


def describe(schema: dict[str, Any], ops: Iterable[Op]) -> None:
    """Add each op's request body and answer to the generated ``schema`` (built when first asked
    for: deriving them takes about half a second, which starting a service should not pay)."""
    components = schema.setdefault("components", {}).setdefault("schemas", {})
    for op in ops:
        operation = schema["paths"][f"/v1/{op.name}"]["post"]
        operation.update(op_schema(op, components))


def op_schema(op: Op, components: dict[str, Any]) -> dict[str, Any]:
    """The op's request body and answer; the types they name are added to ``components``."""
    hints = typing.get_type_hints(getattr(MemoryTool, op.name))
    fields: dict[str, Any] = {}
    for name in op.parameters:
        param = op.signature.parameters[name]
        if param.kind is param.VAR_KEYWORD:
            continue
        annotation = _field_type(hints.get(name, Any))
        fields[name] = (annotation, ... if param.default is inspect.Parameter.empty else param.default)
    request: dict[str, Any] = {"type": "object"}
    try:
        model = create_model(f"{op.name}_arguments", __config__=ConfigDict(arbitrary_types_allowed=True), **fields)
        request = model.model_json_schema(ref_template=REF)
    except (PydanticUserError, TypeError, ValueError):
        pass
    if any(p.kind is p.VAR_KEYWORD for p in op.signature.parameters.values()):
        request["additionalProperties"] = True
    answer: dict[str, Any] = {}
    try:
        answer = TypeAdapter(op.returns).json_schema(ref_template=REF)
    except (PydanticUserError, TypeError, ValueError, NameError, AttributeError):
        pass
    components.update(request.pop("$defs", {}))
    components.update(answer.pop("$defs", {}))
    return {
        "requestBody": {"required": False, "content": {"application/json": {"schema": request}}},
        "responses": {
            "200": {
                "description": "the op's answer",
                "content": {"application/json": {"schema": {"type": "object", "properties": {"result": answer}}}},
            }
        },
    }
