"""Embeddings for collections, computed by llama.cpp (mean pooling, normalised): by default
all-MiniLM-L6-v2, the sentence-embedding model a package ships (`models.sentence_models`,
converted once to a GGUF); or any GGUF, a catalog model or a .gguf file (the embedding
context Ollama's `/api/embed` answers with). The name a collection records is that model
name or path."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from farmhand.models.assemble import ensure_model
from farmhand.models.gguf import read_gguf
from farmhand.models.sentence_models import (
    DEFAULT_SENTENCE_MODEL,
    ensure_sentence_model,
    sentence_model,
)
from farmhand.paths import rag_dir
from farmhand.providers.llamacpp import LlamaEmbedder
from farmhand.rag.library import Library

DEFAULT_EMBEDDER = DEFAULT_SENTENCE_MODEL
EMBED_CONTEXT = 4096
"""Tokens of a chat model's embedding context: the embedded backend's default context, so
under `farmhand serve` it is the very context `/api/embed` built for the same model."""

ContextFor = Callable[[Path, int], LlamaEmbedder]


def embedder_name(source: str) -> str:
    """The name a collection records for `source`: a packaged sentence model's own name
    (whichever alias was given), else `source` as it is."""
    packaged = sentence_model(source)
    return packaged.name if packaged is not None else source


def embedding_file(source: str) -> tuple[Path, int]:
    """The GGUF that embeds for `source` and the tokens of its context: a packaged sentence
    model's own limit, or a chat model's EMBED_CONTEXT (no more than it was trained on)."""
    packaged = sentence_model(source)
    if packaged is not None:
        return ensure_sentence_model(packaged), packaged.max_tokens
    path = ensure_model(source)
    trained = read_gguf(path, keep_arrays=0).context_length
    return path, min(EMBED_CONTEXT, trained or EMBED_CONTEXT)


class GgufEmbedder:
    """Embeds with model `source` (a packaged sentence model, a catalog name or a .gguf
    path). `context_for` gives the embedding context of a file (the service's cache, shared
    with /api/embed); without it this embedder builds and owns one."""

    def __init__(self, source: str, context_for: ContextFor | None = None) -> None:
        self.source = embedder_name(source)
        self._context_for = context_for
        self._own: LlamaEmbedder | None = None
        self._file: tuple[Path, int] | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.source

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._context().embed(texts, truncate=True, normalize=True).vectors

    def _context(self) -> LlamaEmbedder:
        with self._lock:
            if self._own is not None:
                return self._own
            if self._file is None:  # once: a chat model's header takes ~0.2 s to read
                self._file = embedding_file(self.source)
            path, n_ctx = self._file
            if self._context_for is not None:
                return self._context_for(path, n_ctx)
            self._own = LlamaEmbedder(path, n_ctx=n_ctx)
            return self._own

    def close(self) -> None:
        with self._lock:
            if self._own is not None:
                self._own.close()
                self._own = None


def home_library(home: Path | None = None, context_for: ContextFor | None = None) -> Library:
    """The collections of farmhand's home (`paths.rag_dir`), their questions embedded by the
    model each was built with."""
    return Library(rag_dir(home), lambda source: GgufEmbedder(source, context_for))
