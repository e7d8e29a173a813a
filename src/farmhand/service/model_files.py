"""What the service knows about model files and loaded models, kept for the server's life:
GGUF headers and sha256 digests (read once per version of a file: path, size, mtime), the
embedding contexts built on demand, and the providers that are loaded (Ollama's `ps`)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from farmhand.config.models import ModelConfig
from farmhand.models.assemble import file_sha256, known_sha256
from farmhand.models.gguf import GGUFInfo, read_gguf
from farmhand.providers.base import Provider
from farmhand.providers.llamacpp import LlamaEmbedder

FileVersion = tuple[str, int, int]


def file_version(path: Path) -> FileVersion:
    stat = path.stat()
    return (str(path), stat.st_size, stat.st_mtime_ns)


@dataclass
class LoadedModel:
    """A model whose provider is built, since when, how long it is kept after use
    (`keep_alive` None: until the memory budget needs its room) and the memory it was
    estimated to take (`service/model_memory.py`)."""

    config: ModelConfig
    provider: Provider
    last_used: float = 0.0
    keep_alive: float | None = None
    memory: int = 0

    @property
    def expires_at(self) -> float | None:
        return None if self.keep_alive is None else self.last_used + self.keep_alive

    def expired(self, now: float) -> bool:
        expires = self.expires_at
        return expires is not None and expires <= now


@dataclass
class ModelFiles:
    """Caches over model files. Reading a header takes ~0.2 s and hashing a gigabyte
    seconds, so each happens once per file version; blocking: call from worker threads."""

    _infos: dict[FileVersion, GGUFInfo] = field(default_factory=dict)
    _digests: dict[FileVersion, str] = field(default_factory=dict)
    _embedders: dict[tuple[FileVersion, int], LlamaEmbedder] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _building: threading.Lock = field(default_factory=threading.Lock)
    pulling: anyio.Lock = field(default_factory=anyio.Lock)
    """One pull at a time: two pip runs into one interpreter, or two writers of one model
    file, would trip over each other."""

    def info(self, path: Path) -> GGUFInfo:
        version = file_version(path)
        with self._lock:
            found = self._infos.get(version)
        if found is None:
            found = read_gguf(path)
            with self._lock:
                self._infos[version] = found
        return found

    def digest(self, path: Path) -> str:
        """The file's sha256: the verified stamp's when there is one (catalog models), else
        hashed once."""
        version = file_version(path)
        with self._lock:
            found = self._digests.get(version)
        if found is None:
            found = known_sha256(path) or file_sha256(path)
            with self._lock:
                self._digests[version] = found
        return found

    def embedder(self, path: Path, n_ctx: int) -> LlamaEmbedder:
        """The embedding context for `path`, built on first use (a second llama.cpp
        instance over the same memory-mapped weights)."""
        key = (file_version(path), n_ctx)
        with self._building:  # seconds, once: headers and digests need not wait for it
            found = self._embedders.get(key)
            if found is None:
                found = self._embedders[key] = LlamaEmbedder(path, n_ctx=n_ctx)
            return found

    def close(self) -> None:
        with self._building:
            for embedder in self._embedders.values():
                embedder.close()
            self._embedders.clear()
