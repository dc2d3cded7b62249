"""Conversations as static partitions: each chat of the corpus → the facts extraction writes from it.

A CLI partition range (``dagster asset materialize ... --partition-range syn-00...syn-03``) runs as
one run (single-run backfill policy), so the home is opened once for the whole range.

No `from __future__ import annotations` here: Dagster reads config and resource types from
the live annotations.
"""

import dagster as dg

from corpora.conversations import CONVERSATION_IDS, PROVENANCE, TENANT, conversation
from memory_core import Identity
from memory_core.extraction.harvest import CONSOLIDATION_STEPS

from .resources import LLMResource, MemoryHomeResource
from .sources import memory_home_source
from .timeline import STORE_POOL

# Synthetic conversations only in this slice; public dialog corpora join later as more keys.
conversation_partitions = dg.StaticPartitionsDefinition(list(CONVERSATION_IDS))

# Bump when the steps, the rule extractor or how a conversation is written change: the extracted
# facts then turn stale in Dagster, and a re-run writes again (its markers are per code version).
# A model behind `llm` is configuration, not code: the marker names the extractor as well.
EXTRACTOR_CODE_VERSION = "v1"


@dg.asset(
    group_name="corpora",
    partitions_def=conversation_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    code_version="1",
    description="One synthetic first-person chat per partition, with the facts it states known by construction.",
)
def conversation_corpus(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    chats = [conversation(key) for key in context.partition_keys]
    fingerprint = ",".join(c.fingerprint for c in chats)  # one partition's: its chat's own
    return dg.MaterializeResult(
        metadata={
            "turns": sum(c.turns for c in chats),
            "fingerprint": fingerprint,
            "expected_keys": sum(len(c.expected) for c in chats),
            "provenance": PROVENANCE,
        },
        # The content is the version: unchanged chats leave what was extracted from them fresh.
        data_version=dg.DataVersion(fingerprint),
    )


def build_conversation_extraction(code_version: str = EXTRACTOR_CODE_VERSION) -> dg.AssetsDefinition:
    """The extraction asset at ``code_version`` (a test builds a later one to see what turns stale)."""

    @dg.asset(
        name="conversation_extraction",
        group_name="extraction",
        partitions_def=conversation_partitions,
        backfill_policy=dg.BackfillPolicy.single_run(),
        deps=[conversation_corpus, memory_home_source],
        pool=STORE_POOL,
        code_version=code_version,
        description="Each conversation through set_from_messages (the consolidation steps, the configured "
        f"extractor) under its speaker's identity in the tenant {TENANT}; once per conversation, code "
        "version and extractor.",
    )
    def conversation_extraction(
        context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, llm: LLMResource
    ) -> dg.MaterializeResult:
        extractor = llm.extractor()
        written: dict[str, int | str] = {}
        with memory_home.open() as memory:
            for key in context.partition_keys:
                chat = conversation(key)
                marker = f"conversation:{key}:{code_version}:{extractor.name}"
                if memory.store.inspection.marker(marker):
                    written[key] = "already extracted"
                    continue
                tool = memory.for_run(
                    Identity(tenant=TENANT, user=chat.user.lower(), agent="assistant", session=key),
                    origin="assets.conversations",
                )
                result = tool.set_from_messages(
                    chat.as_messages(),
                    session=key,
                    session_date=chat.session_date,
                    steps=CONSOLIDATION_STEPS,
                    extractor=extractor,
                )
                memory.store.inspection.set_marker(marker, ",".join(result.written))
                written[key] = len(result.written)
        context.log.info(f"facts written per conversation: {written}")
        # One run may cover a range: each partition's materialization carries the whole table.
        return dg.MaterializeResult(
            metadata={
                "facts_written": sum(n for n in written.values() if isinstance(n, int)),
                "by_conversation": dg.MetadataValue.json(written),
                "extractor": extractor.name,
                "tenant": TENANT,
            }
        )

    return conversation_extraction


conversation_extraction = build_conversation_extraction()
