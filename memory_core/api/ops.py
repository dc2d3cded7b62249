"""The Memory tool's ops as data: each public method of ``MemoryTool``, its signature, what it
answers and which of its arguments can cross a wire. The HTTP service routes from this table and
the remote client builds its methods from it, so the two faces cannot name different ops."""

from __future__ import annotations

import inspect
import typing
from dataclasses import dataclass
from typing import Any

from .tool import MemoryTool

# Arguments that are Python objects, not data: only an in-process tool takes them.
LOCAL_ONLY = frozenset({"extractor", "merger"})

# Ops that change nothing (a dry run aside): the service may answer them while it drains.
READ_OPS = frozenset(
    {
        "get",
        "get_by_id",
        "list",
        "history",
        "recall",
        "search",
        "search_trace",
        "sql_query",
        "snapshot",
        "doc_get",
        "doc_list",
        "list_facts",
        "graph_recall",
        "extraction_status",
        "learnings",
        "extraction_queue_status",
        "review_queue",
        "dream_proposals",
        "ontology_get",
        "placement",
        "place_fact",
        "known_types",
        "lenses",
        "frame_get",
        "frame_history",
        "frames",
        "events",
        "receipt_keys",
        "verify_receipt",
        "consolidation_runs",
        "lineage",
        "profile_schema",
        "profile",
        "categories",
        "links",
        "observe_status",
        "belief_sources",
        "session_summaries",
    }
)


@dataclass(frozen=True, slots=True)
class Op:
    name: str
    signature: inspect.Signature  # without ``self``
    returns: Any  # the return annotation, resolved
    doc: str

    @property
    def parameters(self) -> list[str]:
        return [n for n in self.signature.parameters if n not in LOCAL_ONLY]

    @property
    def reads(self) -> bool:
        return self.name in READ_OPS


def _ops() -> dict[str, Op]:
    found = {}
    for name, member in vars(MemoryTool).items():
        if name.startswith("_") or not inspect.isfunction(member):
            continue
        signature = inspect.signature(member)
        params = list(signature.parameters.values())[1:]
        hints = typing.get_type_hints(member)
        found[name] = Op(
            name, signature.replace(parameters=params), hints.get("return", Any), inspect.getdoc(member) or ""
        )
    return found


TOOL_OPS: dict[str, Op] = _ops()
