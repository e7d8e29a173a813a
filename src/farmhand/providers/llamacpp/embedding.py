"""Embeddings from a GGUF chat model: a second llama.cpp context made for it.

A context built for generation gives no pooled embeddings, so embedding needs its own
`Llama(embedding=True)` over the same file (the weights are memory-mapped, so the second
instance costs its context, not another copy of the model). Decoder models carry no pooling
type of their own; the token embeddings are averaged (mean pooling), as Ollama does for them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from farmhand.errors import ModelError, RequestError


@dataclass(frozen=True)
class Embedded:
    vectors: list[list[float]]
    prompt_tokens: int


class LlamaEmbedder:
    """Embeds texts with the model at `path`; one text at a time per instance (llama.cpp
    contexts are not shared), so calls are serialised by a lock."""

    def __init__(self, path: Path, *, n_ctx: int) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise ModelError("llama-cpp-python is not installed; run `make setup`") from exc
        threads = os.cpu_count() or 1
        try:
            self.llama: Any = llama_cpp.Llama(
                str(path),
                embedding=True,
                pooling_type=llama_cpp.LLAMA_POOLING_TYPE_MEAN,
                n_ctx=n_ctx,
                n_batch=n_ctx,
                n_ubatch=n_ctx,
                n_threads=threads,
                n_threads_batch=threads,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"could not load {path} for embeddings: {exc}") from exc
        self.n_ctx = n_ctx
        self._lock = threading.Lock()

    def embed(self, texts: Sequence[str], *, truncate: bool, normalize: bool) -> Embedded:
        """One vector per text. Blocking: run it in a worker thread. A text longer than the
        context is cut to fit with `truncate`, else a RequestError says how long it is."""
        with self._lock:
            vectors: list[list[float]] = []
            count = 0
            for i, text in enumerate(texts):
                tokens = self.llama.tokenize(text.encode(), add_bos=True, special=False)
                if len(tokens) > self.n_ctx:
                    if not truncate:
                        raise RequestError(
                            f"input[{i}] is {len(tokens)} tokens, more than the context"
                            f" ({self.n_ctx}); shorten it or send truncate: true",
                            param="input",
                        )
                    tokens = tokens[: self.n_ctx]
                count += len(tokens)
                # llama.cpp cuts what does not fit the batch (the context, here).
                vector = self.llama.embed([text], normalize=normalize, truncate=True)[0]
                vectors.append([float(x) for x in vector])
            return Embedded(vectors, count)

    def close(self) -> None:
        self.llama.close()
