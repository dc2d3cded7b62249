"""The columns of the rows a search reads from the index (its contract with the index adapter).

A leg answers, per candidate, at least its identity and what the leg's own check needs (status
and time: they cost more inside the index's prefilter than checked on a leg's pool). A hit
answered shows the rest; it is taken for the answered rows only.
"""

from __future__ import annotations

LEG_COLUMNS = ("fact_id", "status", "valid_at", "invalid_at", "expires_at")
# What a hit shows and the last filter check reads (its scope from its own columns, not from the
# namespace the prefilter matched), beyond the columns its leg row has.
HIT_COLUMNS = (
    "tenant",
    "scope",
    "owner_id",
    "key",
    "kind",
    "memory_type",
    "status",
    "version_id",
    "observed_at",
    "created_at",
    "text",
    "value_json",
    "provenance_json",
    "subject",
)
