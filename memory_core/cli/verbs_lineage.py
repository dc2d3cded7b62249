"""Lineage and summaries: a fact's evidence links (belief sources) and session summaries."""

from __future__ import annotations
