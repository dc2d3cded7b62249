"""The ports: what the session and the services ask of the world, one ``Protocol`` per capability.

Adapters implement them (``adapters/duckdb``, ``adapters/lance``, the embedders, the LLM client);
a service only ever sees these. The value types the ports carry live with them. Every method a
service or the session calls is named here; an adapter's other methods are its own business.
Import from ``memory_core.ports``; the submodules only group the capabilities.
"""

from .erasure import ErasureStore, HomeFiles
from .index import IndexConsistency, IndexReader, IndexSink, NewRows, SearchIndex, SqlDatabases, SqlParams, SqlResult
from .models import LLM, Clock, Embedder, IdFactory
from .store import (
    ApiKeyStore,
    GraphStore,
    Inspection,
    Mark,
    ProjectionLedger,
    QueueRow,
    ResolverLedger,
    Store,
    TenantSettingsStore,
    WorkQueue,
)
from .substrate import ReceiptKeyring, SubstrateRecord, SubstrateStore, TokenCounter
from .versions import Head, KeyChange, StagedRows, VersionLog, WriteBatch
from .webhooks import WebhookStore, WebhookTransport

__all__ = [
    "LLM",
    "ApiKeyStore",
    "Clock",
    "Embedder",
    "ErasureStore",
    "GraphStore",
    "Head",
    "HomeFiles",
    "IdFactory",
    "IndexConsistency",
    "IndexReader",
    "IndexSink",
    "Inspection",
    "KeyChange",
    "Mark",
    "NewRows",
    "ProjectionLedger",
    "QueueRow",
    "ReceiptKeyring",
    "ResolverLedger",
    "SearchIndex",
    "SqlDatabases",
    "SqlParams",
    "SqlResult",
    "StagedRows",
    "Store",
    "SubstrateRecord",
    "SubstrateStore",
    "TenantSettingsStore",
    "TokenCounter",
    "VersionLog",
    "WorkQueue",
    "WebhookStore",
    "WebhookTransport",
    "WriteBatch",
]
