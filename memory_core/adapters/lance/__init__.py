"""The retrieval index: one Lance table in the memory home (``LanceIndex``), kept current from the
store (``IndexProjector``, the index sink) and searched (``LanceSearch``)."""

from .index import LanceIndex
from .projector import IndexProjector
from .search import LanceSearch

__all__ = ["IndexProjector", "LanceIndex", "LanceSearch"]
