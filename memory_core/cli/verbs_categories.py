"""Categories and links: a namespace's category taxonomy, assigning rows to categories, operator links between rows."""

from __future__ import annotations
