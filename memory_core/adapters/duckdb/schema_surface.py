"""The tables of schema v11: the rest of the seed's memory-plane surface. Each lane keeps its
tables in its own module; this one lists them for the migration (DuckDB) and the schema
(PostgreSQL), which run each non-blank element in order."""

from __future__ import annotations

from .schema_categories import CATEGORIES_DDL
from .schema_learnings import LEARNINGS_DDL
from .schema_namespaces import NAMESPACES_DDL
from .schema_observe import OBSERVE_DDL
from .schema_summaries import SUMMARIES_DDL

SURFACE_DDLS: tuple[str, ...] = (NAMESPACES_DDL, CATEGORIES_DDL, OBSERVE_DDL, SUMMARIES_DDL, LEARNINGS_DDL)
