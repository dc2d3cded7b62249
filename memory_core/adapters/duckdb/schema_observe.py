"""Schema v11: tool-trace observations and the sessions crystallize marks ready."""

from __future__ import annotations

OBSERVE_DDL = ""
