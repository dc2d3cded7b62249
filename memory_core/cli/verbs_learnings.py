"""Learnings: rules a user states about the agent, queued as candidates for a reviewer."""

from __future__ import annotations
