"""Lifecycle changes of stored facts: each a new version row, decided by pure functions."""
