"""The memory service: one process owns a home and serves the Memory tool over HTTP (``/v1``)."""

from .app import create_app
from .guards import ServiceSettings
from .server import ThreadedServer, serve

__all__ = ["ServiceSettings", "ThreadedServer", "create_app", "serve"]
