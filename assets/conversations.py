"""Conversations as static partitions: each chat of a corpus → the facts extraction writes from it.

The keys are the synthetic chats (``syn-00`` …, answers known by construction) and LoCoMo's dev
conversations (``conv-26`` …, read from ../shared, never copied). Without the LoCoMo file its
partitions materialize as skipped, saying where they looked; they turn stale when it appears
(``locomo_dev`` is upstream).

A CLI partition range (``dagster asset materialize ... --partition-range syn-00...syn-03``) runs as
one run (single-run backfill policy), so the home is opened once for the whole range.

No `from __future__ import annotations` here: Dagster reads config and resource types from
the live annotations.
"""

import dagster as dg

from corpora.conversations import CONVERSATION_IDS, PROVENANCE, TENANT, conversation
from corpora.locomo import (
    DEV_SAMPLE_IDS,
    LICENCE,
    Conversation,
    LocomoNotFound,
    conversation_fingerprint,
    load_locomo,
    locate,
    session_messages,
)
from memory_core import Identity
from memory_core.environment import shared_root
from memory_core.extraction.harvest import CONSOLIDATION_STEPS

from .resources import LLMResource, MemoryHomeResource
from .sources import locomo_dev, memory_home_source
from .timeline import STORE_POOL

conversation_partitions = dg.StaticPartitionsDefinition([*CONVERSATION_IDS, *DEV_SAMPLE_IDS])
LOCOMO_TENANT = "locomo-dev"

# Bump when the steps, the rule extractor or how a conversation is written change: the extracted
# facts then turn stale in Dagster, and a re-run writes again (its markers are per code version).
# A model behind `llm` is configuration, not code: the marker names the extractor as well.
EXTRACTOR_CODE_VERSION = "v1"


def _locomo(keys: list[str]) -> dict[str, Conversation] | LocomoNotFound:
    """The LoCoMo conversations among ``keys`` (the file read once), or why there are none."""
    if not any(k in DEV_SAMPLE_IDS for k in keys):
        return {}
    try:
        path = locate(None, shared_root())
    except LocomoNotFound as exc:
        return exc
    return {c.sample_id: c for c in load_locomo(path)[0] if c.sample_id in keys}


@dg.asset(
    group_name="corpora",
    partitions_def=conversation_partitions,
    backfill_policy=dg.BackfillPolicy.single_run(),
    deps=[locomo_dev],
    code_version="2",
    description="One conversation per partition: a synthetic first-person chat (its facts known by "
    "construction) or a LoCoMo dev conversation (skipped, saying where it looked, without ../shared).",
)
def conversation_corpus(context: dg.AssetExecutionContext) -> dg.MaterializeResult:
    keys = list(context.partition_keys)
    locomo = _locomo(keys)
    chats = [conversation(key) for key in keys if key in CONVERSATION_IDS]
    prints = [c.fingerprint for c in chats]
    turns, provenance = sum(c.turns for c in chats), [PROVENANCE] if chats else []
    skipped = ""
    if isinstance(locomo, LocomoNotFound):
        skipped = str(locomo)
        prints += ["absent" for k in keys if k in DEV_SAMPLE_IDS]
        context.log.warning(f"LoCoMo partitions skipped: {skipped}")
    else:
        prints += [
            conversation_fingerprint(locomo[k]) if k in locomo else "absent" for k in keys if k in DEV_SAMPLE_IDS
        ]
        turns += sum(len(c.turns) for c in locomo.values())
        provenance += [LICENCE] if locomo else []
    fingerprint = ",".join(prints)  # one partition's: its conversation's own
    return dg.MaterializeResult(
        metadata={
            "turns": turns,
            "fingerprint": fingerprint,
            "expected_keys": sum(len(c.expected) for c in chats),
            "provenance": "; ".join(provenance),
            **({"skipped": True, "reason": skipped} if skipped else {}),
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
        f"extractor): a synthetic chat under its speaker's identity in the tenant {TENANT}, a LoCoMo "
        f"conversation session by session under its own user in {LOCOMO_TENANT}; once per conversation, "
        "code version and extractor.",
    )
    def conversation_extraction(
        context: dg.AssetExecutionContext, memory_home: MemoryHomeResource, llm: LLMResource
    ) -> dg.MaterializeResult:
        extractor = llm.extractor()
        written: dict[str, int | str] = {}
        keys = list(context.partition_keys)
        locomo = _locomo(keys)
        with memory_home.open() as memory:
            for key in keys:
                marker = f"conversation:{key}:{code_version}:{extractor.name}"
                if key in DEV_SAMPLE_IDS and (isinstance(locomo, LocomoNotFound) or key not in locomo):
                    why = locomo if isinstance(locomo, LocomoNotFound) else "not in the LoCoMo file"
                    written[key] = f"skipped: {why}"
                    continue
                if memory.store.inspection.marker(marker):
                    written[key] = "already extracted"
                    continue
                if key in DEV_SAMPLE_IDS:
                    facts = _write_locomo(memory, locomo[key], extractor)
                    memory.store.inspection.set_marker(marker, ",".join(facts))
                    written[key] = len(facts)
                    continue
                chat = conversation(key)
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
                "tenants": f"{TENANT}, {LOCOMO_TENANT}",
            }
        )

    return conversation_extraction


conversation_extraction = build_conversation_extraction()


def _write_locomo(memory, chat: Conversation, extractor) -> list[str]:
    """One LoCoMo conversation, session by session (each with its own date), under one user named
    by the sample id: both speakers are people that user talks about. The keys written."""
    tool = memory.for_run(
        Identity(tenant=LOCOMO_TENANT, user=chat.sample_id, agent="assistant", session=chat.sample_id),
        origin="assets.conversations",
    )
    written: list[str] = []
    for number, session_date, messages in session_messages(chat):
        result = tool.set_from_messages(
            messages,
            session=f"{chat.sample_id}-s{number}",
            session_date=session_date,
            steps=CONSOLIDATION_STEPS,
            extractor=extractor,
        )
        written.extend(result.written)
    return written
