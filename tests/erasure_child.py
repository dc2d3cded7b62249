"""The process the kill tests stop: erase ana from a filled home, and SIGKILL itself when the saga
reaches the named point (``before:<step>``, ``mid:<step>``, ``after:<step>``)."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

from tests.erasure_home import open_home


def main(home: str, point: str) -> None:
    def observe(seen: str) -> None:
        if seen == point:
            os.kill(os.getpid(), signal.SIGKILL)

    memory = open_home(Path(home))
    memory.erase("acme", user="ana", observer=observe)
    print("finished without reaching", point)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
