"""Services: one class per capability of the Memory tool, each constructed with ``(session,
identity, origin)`` (or the session alone, for a home's maintenance). A service gets its ports
from the session, never a concrete adapter, and never calls another service."""
