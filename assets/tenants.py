"""Tenants as dynamic partitions: a per-tenant report (counts and a plot). The sensor that
registers each tenant the store holds as a partition is in ``schedules``.

No `from __future__ import annotations` here: Dagster reads resource types from the annotations.
"""

import base64
import io

import dagster as dg

from .resources import MemoryHomeResource
from .writers import STORE_WRITERS

tenants = dg.DynamicPartitionsDefinition(name="tenants")


def _status_plot(counts: dict[str, int], tenant: str) -> bytes:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 2.6))
    names = sorted(counts)
    ax.barh(names, [counts[n] for n in names], color="tab:blue")
    ax.set_xlabel("facts (latest state)")
    ax.set_title(f"tenant {tenant}: facts by status")
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    plt.close(fig)
    return buffer.getvalue()


@dg.asset(
    group_name="bitemporal",
    partitions_def=tenants,
    # What wrote the store it reads (each tenant's report may change when any of them runs), but
    # not a partitioned writer: its partitions do not map onto tenant partitions.
    deps=[w for w in STORE_WRITERS if w.partitions_def is None],
    description="One tenant's memory: facts by status, keys and owners per scope, graph, queue and resolver "
    "counts, and a plot of facts by status.",
)
def tenant_report(context: dg.AssetExecutionContext, memory_home: MemoryHomeResource) -> dg.MaterializeResult:
    tenant = context.partition_key
    with memory_home.open(read_only=True) as memory:
        report = memory.store.inspection.tenant_report(tenant)
    status = report["facts_by_status"]
    png = _status_plot(status or {"none": 0}, tenant)
    path = memory_home.path / "reports" / "tenants" / f"{tenant}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(png)
    table = "\n".join(
        ["| scope | owners | keys |", "|---|---:|---:|"]
        + [f"| {r['scope']} | {r['owners']} | {r['keys']} |" for r in report["scopes"]]
    )
    return dg.MaterializeResult(
        metadata={
            **{f"facts_{k}": v for k, v in status.items()},
            **{k: report[k] for k in ("graph_triples", "extraction_queued", "resolver_owed")},
            "scopes": dg.MetadataValue.md(table),
            "plot": dg.MetadataValue.md(f"![facts by status](data:image/png;base64,{base64.b64encode(png).decode()})"),
            "plot_path": dg.MetadataValue.path(str(path)),
        }
    )
