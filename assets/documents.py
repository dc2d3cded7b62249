"""The document plane in the graph: the project's own docs, stored as documents of a demo tenant.

Each `docs/*.md` becomes a document (chunks by its Markdown structure) whose metadata names it as
an entity of type `guide`, so its chunks join the entity graph and are found by `search`.

No `from __future__ import annotations` here: Dagster reads config and resource types from
the live annotations.
"""

from pathlib import Path

import dagster as dg

from memory_core import Identity

from .resources import MemoryHomeResource
from .sources import DOCS, memory_home_source, project_guides
from .timeline import STORE_POOL


class DocumentsConfig(dg.Config):
    tenant: str = "docs-demo"
    folder: str = ""  # empty: the project's docs/


@dg.asset(
    group_name="bitemporal",
    pool=STORE_POOL,
    deps=[memory_home_source, project_guides],
    code_version="1",
    description="The project's guides (docs/*.md) stored as documents in the tenant scope of a demo tenant: "
    "chunked by heading, searchable as kind document, each an entity of type guide in the graph.",
)
def guide_documents(
    context: dg.AssetExecutionContext, config: DocumentsConfig, memory_home: MemoryHomeResource
) -> dg.MaterializeResult:
    folder = Path(config.folder) if config.folder else DOCS
    files = sorted(folder.glob("*.md"))
    if not files:
        context.log.warning(f"skipped: no Markdown files in {folder}; set the asset's `folder` config")
        return dg.MaterializeResult(metadata={"skipped": True, "reason": f"no Markdown files in {folder}"})
    rows = []
    with memory_home.open() as memory:
        tool = memory.for_run(Identity(tenant=config.tenant, user="librarian", admin=True), origin="assets.documents")
        for path in files:
            result = tool.doc_put(
                path.stem,
                path.read_text(encoding="utf-8"),
                scope="tenant",
                metadata={"subject": path.stem, "entity_type": "guide", "fact_class": "guide"},
            )
            rows.append((path.name, result.details["chunks"], result.verdict))
        linked = len(tool.graph_recall(files[0].stem, scope="tenant").documents)
    table = "\n".join(["| file | chunks | verdict |", "|---|---:|---|"] + [f"| {f} | {c} | {v} |" for f, c, v in rows])
    return dg.MaterializeResult(
        metadata={
            "documents": len(rows),
            "chunks": sum(c for _, c, _ in rows),
            "chunks_in_graph_for_first": linked,
            "table": dg.MetadataValue.md(table),
        }
    )
