"""Observation capture: record tool-trace observations, crystallize a session, run the observation extraction."""

from __future__ import annotations
