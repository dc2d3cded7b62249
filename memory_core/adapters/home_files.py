"""The files of a memory home as an erasure sees them: the saga's needle file, a byte census of
every file, and the derived files that may quote content.

The needle file (``erasures/<request>.json``) holds what the census looks for, so a saga killed
after the rows are gone can still prove their absence. It is the one file the census skips, and
it goes once the census has verified. The embedder's model cache (``models/``) is skipped too:
public model weights, which no write ever puts memory into (a vocabulary holds common words)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Sequence

import re2

ERASURE_DIR = "erasures"
_CHUNK = 64 << 20  # a file is read this much at a time, whatever its size
SKIPPED = (ERASURE_DIR, "models")
DERIVED = ("reports",)  # written from the store by the platform; the next run writes them again


class HomeFolder:
    def __init__(self, home: Path, *, chunk_bytes: int = _CHUNK) -> None:
        self.home = Path(home)
        self.chunk_bytes = chunk_bytes

    def _needle_file(self, request_id: str) -> Path:
        return self.home / ERASURE_DIR / f"{request_id}.json"

    def put_needles(self, request_id: str, body: dict[str, Any]) -> None:
        path = self._needle_file(request_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_suffix(".tmp")
        fd = os.open(staged, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(body, out, ensure_ascii=False)
            out.flush()
            os.fsync(out.fileno())
        os.replace(staged, path)

    def needles(self, request_id: str) -> dict[str, Any] | None:
        path = self._needle_file(request_id)
        return json.loads(path.read_text(encoding="utf-8")) if path.exists() else None

    def drop_needles(self, request_id: str) -> None:
        self._needle_file(request_id).unlink(missing_ok=True)
        self._needle_file(request_id).with_suffix(".tmp").unlink(missing_ok=True)
        folder = self.home / ERASURE_DIR
        if folder.exists() and not any(folder.iterdir()):
            folder.rmdir()

    def _files(self, under: Path) -> list[Path]:
        skipped = {self.home / s for s in SKIPPED}
        out = []
        for root, dirs, files in os.walk(under):
            dirs[:] = [d for d in dirs if Path(root, d) not in skipped]
            out.extend(Path(root, f) for f in files)
        return sorted(out)

    def scan(self, needles: Sequence[str]) -> tuple[dict[str, int], int]:
        finder = _Finder(needles, self.chunk_bytes)
        hits: dict[str, int] = {}
        files = self._files(self.home)
        for path in files:
            n = finder.count(path)
            if n:
                hits[path.relative_to(self.home).as_posix()] = n
        return hits, len(files)

    def drop_quoting(self, needles: Sequence[str]) -> list[str]:
        finder = _Finder(needles, self.chunk_bytes)
        dropped = []
        for folder in DERIVED:
            for path in self._files(self.home / folder) if (self.home / folder).exists() else ():
                if finder.count(path):
                    path.unlink()
                    dropped.append(path.relative_to(self.home).as_posix())
        return dropped

    def drop_index(self) -> bool:
        folder = self.home / "lance"
        if not folder.exists():
            return False
        shutil.rmtree(folder)
        return True


class _Finder:
    """Every needle's bytes in one pass over a file: one RE2 automaton over the alternation of
    the needles as literals, on bytes (Latin-1, so any byte is a character). Occurrences are
    counted leftmost-first, so overlapping needles may count once; none is never missed."""

    def __init__(self, needles: Sequence[str], chunk_bytes: int) -> None:
        self.chunk_bytes = chunk_bytes
        wanted = [n.encode("utf-8") for n in needles if n]
        self.overlap = max((len(n) for n in wanted), default=1) - 1
        self.regex = None
        if wanted:
            options = re2.Options()
            options.encoding = re2.Options.Encoding.LATIN1
            options.max_mem = 256 << 20
            self.regex = re2.compile(b"|".join(re2.escape(n) for n in wanted), options=options)

    def count(self, path: Path) -> int:
        if self.regex is None:
            return 0
        found, tail = 0, b""
        try:
            with open(path, "rb") as f:
                while chunk := f.read(self.chunk_bytes):
                    data = tail + chunk
                    # A match ending inside the carried tail was counted with the chunk before.
                    found += sum(1 for m in self.regex.finditer(data) if m.end() > len(tail))
                    tail = data[-self.overlap :] if self.overlap else b""
        except (FileNotFoundError, PermissionError):
            return 0
        return found
