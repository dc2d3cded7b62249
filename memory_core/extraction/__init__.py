"""Extraction: durable facts from conversations (set_from_messages), the deferred queue, harvest."""
