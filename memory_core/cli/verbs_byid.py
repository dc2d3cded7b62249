"""By-id ops: get-by-id, update-by-id and verify, each addressing a row by its version or fact id."""

from __future__ import annotations
