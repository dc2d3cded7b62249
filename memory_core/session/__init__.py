"""The session layer: the ports one process holds on a home, the one commit every write goes
through (``core``), and the write pipeline every service that writes shares: the point write
(``point``) and the batch write (``bulk``), which decide with the pure phases of ``write`` and
apply through the commit; and the reads several services share (``reads``)."""

from .core import Commit, RunService, Session

__all__ = ["Commit", "RunService", "Session"]
