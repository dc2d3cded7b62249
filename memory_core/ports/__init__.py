"""The ports: what the session and the services ask of the world, one ``Protocol`` per capability.

Adapters implement them (``adapters/duckdb``, ``adapters/lance``, the embedders, the LLM client);
a service only ever sees these. The value types the ports carry live with them. Every method a
service or the session calls is named here; an adapter's other methods are its own business.
Import from ``memory_core.ports``; the submodules only group the capabilities.
"""

from .communities import CommunityStore
from .consolidation import ConsolidationStore
from .dreams import DreamsStore
from .erasure import ErasureStore, HomeFiles
from .index import IndexConsistency, IndexReader, IndexSink, NewRows, SearchIndex, SqlDatabases, SqlParams, SqlResult
from .models import LLM, Clock, Embedder, IdFactory
from .profiles import ProfileSchemaStore
from .reflect import ReflectStore
from .store import (
    ApiKeyStore,
    ChangeFeed,
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
from .usage import UsageStore
from .versions import Head, KeyChange, StagedRows, VersionLog, WriteBatch
from .webhooks import WebhookStore, WebhookTransport

__all__ = [
    "LLM",
    "ApiKeyStore",
    "ChangeFeed",
    "Clock",
    "CommunityStore",
    "ConsolidationStore",
    "DreamsStore",
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
    "ProfileSchemaStore",
    "ProjectionLedger",
    "QueueRow",
    "ReceiptKeyring",
    "ReflectStore",
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
    "UsageStore",
    "VersionLog",
    "WorkQueue",
    "WebhookStore",
    "WebhookTransport",
    "WriteBatch",
]
