"""Schema v11: a namespace's category taxonomy, the category links of its rows, and operator links between rows."""

from __future__ import annotations

CATEGORIES_DDL = ""
