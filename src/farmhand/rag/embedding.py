"""Embeddings for collections from the embedded model: the same llama.cpp embedding context
(mean pooling, normalised) that Ollama's `/api/embed` answers with, over a catalog model
or a .gguf file. The name a collection records is that catalog name or path."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from farmhand.models.assemble import ensure_model
from farmhand.paths import rag_dir
from farmhand.providers.llamacpp import LlamaEmbedder
from farmhand.rag.library import Library

EMBED_CONTEXT = 4096
"""Tokens of the embedding context: the embedded backend's default context, so under
`farmhand serve` it is the very context `/api/embed` built for the same model."""

ContextFor = Callable[[Path, int], LlamaEmbedder]


class GgufEmbedder:
    """Embeds with model `source` (a catalog name or a .gguf path). `context_for` gives the
    embedding context of a file (the service's cache, shared with /api/embed); without it
    this embedder builds and owns one."""

    def __init__(self, source: str, context_for: ContextFor | None = None) -> None:
        self.source = source
        self._context_for = context_for
        self._own: LlamaEmbedder | None = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self.source

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._context().embed(texts, truncate=True, normalize=True).vectors

    def _context(self) -> LlamaEmbedder:
        path = ensure_model(self.source)
        if self._context_for is not None:
            return self._context_for(path, EMBED_CONTEXT)
        with self._lock:
            if self._own is None:
                self._own = LlamaEmbedder(path, n_ctx=EMBED_CONTEXT)
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
