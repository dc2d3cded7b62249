"""What the pipeline reads but does not make, observed: each source's data version is what its
downstream was computed from, so a change there (and only there) turns the downstream stale.

- ``memory_home``: the home's identity. A home deleted and made again is another home, so every
  asset that wrote the old one is stale; writes into the same home leave them fresh.
- ``embedder_model``: the configured embedder (name, model, dimension). The index is stale when it
  changes; the Lance index itself keeps up with every write through the Memory tool.
- ``extraction_queue``: the newest queued job (the sensor's cursor). A drain is stale when work
  was queued since; draining does not change it.
- ``locomo_dev``, ``mudoco``, ``project_guides``: the files, hashed, or ``absent`` with where they
  were looked for. An evaluation skipped for missing data turns stale when the data appears.

No `from __future__ import annotations` here: Dagster reads resource types from the annotations.
"""

import hashlib
from pathlib import Path

import dagster as dg

from corpora.coref import MUDOCO_DOMAINS, MUDOCO_LICENCE, CorpusNotFound, locate_mudoco
from corpora.locomo import LICENCE, LocomoNotFound, locate
from memory_core.environment import shared_root

from .resources import EmbedderResource, MemoryHomeResource

DOCS = Path(__file__).resolve().parents[1] / "docs"  # the project's guides (``guide_documents``)


def files_version(paths: list[Path]) -> str:
    """One digest over the files' names and bytes (read in chunks: LoCoMo is a few MB)."""
    digest = hashlib.sha256()
    for path in sorted(paths):
        digest.update(path.name.encode() + b"\0")
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()[:16]


def _absent(why: str, licence: str) -> dg.ObserveResult:
    return dg.ObserveResult(
        data_version=dg.DataVersion("absent"), metadata={"reason": why, "present": False, "licence": licence}
    )


def _files_observation(paths: list[Path], licence: str) -> dg.ObserveResult:
    return dg.ObserveResult(
        data_version=dg.DataVersion(files_version(paths)),
        metadata={
            "files": dg.MetadataValue.json([str(p) for p in sorted(paths)]),
            "bytes": sum(p.stat().st_size for p in paths),
            "present": True,
            "licence": licence,
        },
    )


@dg.observable_source_asset(
    name="memory_home",
    group_name="bitemporal",
    description="The memory home itself: its identity (made when it is first observed or opened), so that "
    "a home deleted and made again turns everything that wrote the old one stale.",
)
def memory_home_source(memory_home: MemoryHomeResource) -> dg.ObserveResult:
    identity = memory_home.identity()
    return dg.ObserveResult(
        data_version=dg.DataVersion(identity),
        metadata={"home": memory_home.url or str(memory_home.path), "identity": identity},
    )


@dg.observable_source_asset(
    group_name="retrieval",
    description="The embedder the index is built and queried with (name, model, dimension).",
)
def embedder_model(embedder: EmbedderResource) -> dg.ObserveResult:
    identity = f"{embedder.name}|{embedder.model}|{embedder.dim}"
    return dg.ObserveResult(data_version=dg.DataVersion(identity), metadata={"embedder": identity})


@dg.observable_source_asset(
    group_name="extraction",
    description="The extraction queue's newest job: changes only when work is queued.",
)
def extraction_queue(memory_home: MemoryHomeResource) -> dg.ObserveResult:
    if not memory_home.url and not (memory_home.path / "memory.duckdb").exists():
        return dg.ObserveResult(data_version=dg.DataVersion("empty"), metadata={"reason": "no home yet"})
    seen = memory_home.peek(lambda home: home.queue_state())
    if isinstance(seen, dg.SkipReason):  # busy, or the service did not answer: look again next run
        return dg.ObserveResult(data_version=dg.DataVersion("unseen"), metadata={"reason": seen.skip_message or ""})
    cursor, backlog = seen
    return dg.ObserveResult(
        data_version=dg.DataVersion(cursor or "empty"), metadata={"backlog": dg.MetadataValue.json(backlog)}
    )


@dg.observable_source_asset(
    group_name="corpora",
    description="LoCoMo's dev conversations and their observations (Maharana et al., ACL 2024), read from "
    "../shared/corpora/locomo or $MEMCORE_SHARED; never copied into the repo.",
)
def locomo_dev() -> dg.ObserveResult:
    try:
        return _files_observation([locate(None, shared_root())], LICENCE)
    except LocomoNotFound as exc:
        return _absent(str(exc), LICENCE)


@dg.observable_source_asset(
    group_name="corpora",
    description="MuDoCo's coreference dialogs (facebookresearch/mudoco), read from ../shared/corpora/mudoco "
    "or $MEMCORE_SHARED; never copied into the repo.",
)
def mudoco() -> dg.ObserveResult:
    try:
        folder = locate_mudoco(None, shared_root())
    except CorpusNotFound as exc:
        return _absent(str(exc), MUDOCO_LICENCE)
    paths = [folder / f"mudoco_{d}.json" for d in MUDOCO_DOMAINS]
    return _files_observation([p for p in paths if p.exists()], MUDOCO_LICENCE)


@dg.observable_source_asset(
    group_name="corpora",
    description="The project's own guides, docs/*.md: what guide_documents stores.",
)
def project_guides() -> dg.ObserveResult:
    licence = "the project's own documentation"
    paths = sorted(DOCS.glob("*.md"))
    return _files_observation(paths, licence) if paths else _absent(f"no Markdown files in {DOCS}", licence)


SOURCES = (memory_home_source, embedder_model, extraction_queue, locomo_dev, mudoco, project_guides)
