"""The assets that write the store: upstream of everything that reads or maintains all of it (the
retrieval index is rebuilt from every latest state; the expiry sweep and the resolver pass work on
every fact). The queue drain is one: a queued extraction job writes facts."""

from .conversations import conversation_extraction
from .documents import guide_documents
from .extraction import extraction_queue_drain
from .placement import placed_facts
from .resolver import resolver_demo_statements
from .timeline import timeline_memory

STORE_WRITERS = (
    timeline_memory,
    placed_facts,
    guide_documents,
    resolver_demo_statements,
    conversation_extraction,
    extraction_queue_drain,
)
