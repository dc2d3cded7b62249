"""Scope-wide ops: clear a scope, delete or restore a namespace, promote a fact into a shared scope."""

from __future__ import annotations
