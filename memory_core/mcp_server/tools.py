"""The Memory tool's ops as MCP tools: one table, built from ``memory_core.api.ops.TOOL_OPS``, so
the MCP face can name no op that the tool, the HTTP service and the remote client do not have.

Each MCP tool is one op: its name (``memory_<op>``; ops already named by their plane keep their
name: ``doc_put``, ``graph_recall``, ``sql_query``, ``list_facts``, ...), its description (the
op's docstring) and a JSON Schema of its arguments derived from the op's signature. A call runs
the op on a tool object (``MemoryTool`` or ``RemoteTool``: the same methods) and answers the
op's result in the wire form (``memory_core.wire``) as JSON text, or the typed refusal as
``{"error": {"code", "status", "message"}}``.
"""

from __future__ import annotations

import datetime as dt
import enum
import inspect
import json
import types as pytypes
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from mcp import types

from ..access import refuse_identity_fields
from ..api.ops import LOCAL_ONLY, TOOL_OPS, Op
from ..api.tool import MemoryTool
from ..errors import InvalidInput, MemcoreError
from ..wire import decode_any, encode, error_body

# Ops whose name already says which plane they act on keep it; every other op is ``memory_<op>``.
_OWN_PREFIXES = ("doc_", "graph_", "sql_", "ontology_", "lens_", "frame_")
_OWN_NAMES = frozenset({"list_facts"})

# Writes that remove or overwrite what was there (MCP's ``destructiveHint``); other writes add.
_DESTRUCTIVE = frozenset(
    {
        "delete",
        "delete_version",
        "doc_delete",
        "redact",
        "reject",
        "rollback",
        "restore_snapshot",
        "configure",
        "lens_expire",
        "lens_unassign",
    }
)

# Ops that reach past the home (MCP's ``openWorldHint``): ask calls the memory's language model.
_OPEN_WORLD = frozenset({"ask"})

# What the common arguments mean; the op's docstring describes the rest.
_ARGUMENT_TEXT = {
    "scope": "Whose memory: user (default), agent, tenant or global (global needs an admin key).",
    "as_of": "Valid time: what was true at this instant (ISO 8601 with a zone); default now.",
    "known_at": "Transaction time: as the store believed it at this instant (ISO 8601 with a zone).",
    "valid_at": "When the fact became true (ISO 8601 with a zone); default now.",
    "invalid_at": "When the fact stops being true (ISO 8601 with a zone; may be in the future).",
    "observed_at": "When the fact was observed (ISO 8601 with a zone).",
    "dry_run": "Answer the verdict and write nothing.",
    "key": "The fact's key (non-empty text).",
    "value": "Any JSON value.",
    "query": "What to look for, in words.",
    "k": "How many results at most.",
}


@dataclass(frozen=True, slots=True)
class McpTool:
    """One op as an MCP tool."""

    name: str
    op: Op
    input_schema: Mapping[str, Any]

    def describe(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            description=self.op.doc or self.op.name,
            input_schema=dict(self.input_schema),
            annotations=types.ToolAnnotations(
                read_only_hint=self.op.reads,
                destructive_hint=False if self.op.reads else self.op.name in _DESTRUCTIVE,
                # the tool's world is the home: only ask reaches outside it, to the memory's model
                open_world_hint=self.op.name in _OPEN_WORLD,
            ),
        )

    def call(self, tool: Any, arguments: Mapping[str, Any]) -> str:
        """Run the op on ``tool`` (a ``MemoryTool`` or a ``RemoteTool``) with the call's JSON
        arguments; its result as JSON text. A refusal raises its typed error."""
        refuse_identity_fields(arguments, "tool call")  # the tool is bound to its identity already
        local = sorted(LOCAL_ONLY & arguments.keys())
        if local:
            raise InvalidInput(
                f"{self.op.name}: {', '.join(local)} is a Python object and cannot cross the wire", field=local[0]
            )
        # As the HTTP service does: a tagged wire value ({"$t": ..., "v": ...}) arrives as what it tags.
        args = {str(name): decode_any(value) for name, value in arguments.items()}
        result = getattr(tool, self.op.name)(**args)  # the tool's own boundary checks every argument
        return to_json(encode(result, self.op.returns))


def to_json(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


def refusal(exc: MemcoreError) -> types.CallToolResult:
    """A typed error as an MCP tool error: the model reads the code and the message and can correct
    its call, which a protocol error would hide from it."""
    return types.CallToolResult(content=[types.TextContent(text=to_json(error_body(exc)))], is_error=True)


def tool_name(op: str) -> str:
    return op if op in _OWN_NAMES or op.startswith(_OWN_PREFIXES) else f"memory_{op}"


def _build() -> dict[str, McpTool]:
    found = {}
    for op in TOOL_OPS.values():
        tool = McpTool(tool_name(op.name), op, input_schema(op))
        found[tool.name] = tool
    return found


def input_schema(op: Op) -> dict[str, Any]:
    """The JSON Schema of an op's arguments: a flat object, no ``$ref``, so any client (and any
    model) reads it as it is."""
    hints = typing.get_type_hints(getattr(MemoryTool, op.name))
    properties: dict[str, Any] = {}
    required: list[str] = []
    open_ended = False
    for name in op.parameters:
        param = op.signature.parameters[name]
        if param.kind is param.VAR_KEYWORD:
            open_ended = True  # configure(**settings): the names are the settings' own
            continue
        schema = _schema(hints.get(name, Any))
        if name in _ARGUMENT_TEXT:
            schema["description"] = _ARGUMENT_TEXT[name]
        if name == "scope" and op.name == "set":
            schema["description"] += " Or auto: placed by the tenant's ontology (needs subject and subject_type)."
        default = param.default
        if default is inspect.Parameter.empty:
            required.append(name)
        elif default is not None:
            schema["default"] = default.value if isinstance(default, enum.Enum) else encode(default)
        properties[name] = schema
    body: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": open_ended}
    if required:
        body["required"] = required
    return body


def _schema(annotation: Any) -> dict[str, Any]:
    """The JSON Schema of one argument type, as the types the tool's signatures use spell it."""
    if annotation is Any or annotation is object:
        return {}
    if annotation is type(None):
        return {"type": "null"}
    if annotation is bool:
        return {"type": "boolean"}
    if annotation is int:
        return {"type": "integer"}
    if annotation is float:
        return {"type": "number"}
    if annotation is str:
        return {"type": "string"}
    if annotation is dt.datetime:
        return {"type": "string", "format": "date-time"}
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return {"type": "string", "enum": [m.value for m in annotation]}
    origin = typing.get_origin(annotation)
    args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
    if origin in (typing.Union, pytypes.UnionType):
        return _union(args)
    if origin in (list, tuple, set, frozenset, Sequence, Iterable) or annotation in (list, tuple):
        item = _schema(args[0]) if len(args) == 1 else {}
        return {"type": "array", "items": item} if item else {"type": "array"}
    if origin in (dict, Mapping) or annotation is dict:
        return {"type": "object"}
    return {}  # a type JSON cannot name: any value, checked by the tool's own boundary


def _union(members: list[Any]) -> dict[str, Any]:
    nullable = type(None) in members
    members = [m for m in members if m is not type(None)]
    if str in members:
        # Text is the spelling every member of these unions accepts (an enum's value, an ISO 8601
        # instant); the enum's values are named so a model knows them.
        values = [v.value for m in members if isinstance(m, type) and issubclass(m, enum.Enum) for v in m]
        schema: dict[str, Any] = {"type": "string"}
        if values:
            schema["examples"] = values
    elif len(members) == 1:
        schema = _schema(members[0])
    else:
        schema = {"anyOf": [_schema(m) for m in members]}
    if nullable and isinstance(schema.get("type"), str):
        schema["type"] = [schema["type"], "null"]
    elif nullable and "anyOf" in schema:
        schema["anyOf"].append({"type": "null"})
    return schema


MCP_TOOLS: dict[str, McpTool] = _build()
