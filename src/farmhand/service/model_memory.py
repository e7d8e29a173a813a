"""How much memory a model takes once loaded, estimated before loading it, and the budget
loaded models share (`server.engine.memory_mib`).

An embedded model costs its weights (the GGUF file, memory-mapped) plus its KV cache, which
grows with n_ctx (2 x layers x KV width x n_ctx x 2 bytes at f16, for each of its
n_parallel sequences), plus llama.cpp's compute
buffers. The estimate errs high: it decides whether a model may be loaded at all, and which
idle ones go first, before a byte is allocated. A model behind an HTTP backend costs nothing
here.
"""

from __future__ import annotations

import os
from pathlib import Path

from farmhand.config.models import ModelConfig
from farmhand.errors import ModelError
from farmhand.models.assemble import local_file
from farmhand.models.catalog import DEFAULT_MODEL, lookup
from farmhand.models.gguf import GGUFInfo, read_gguf

MIB = 1024 * 1024
# llama.cpp's compute and output buffers, on top of weights and KV (measured about 300 MiB
# for the default 1.5B model at n_ctx 4096; other sizes scale with the vocabulary).
COMPUTE_BYTES = 384 * MIB
KV_BYTES_PER_VALUE = 2  # f16
# When the header does not say: a generous guess per token of context.
UNKNOWN_KV_BYTES_PER_TOKEN = 128 * 1024
DEFAULT_BUDGET_SHARE = 0.75  # of physical memory, when `memory_mib` is not set


def model_source(model: ModelConfig) -> str:
    """What the embedded backend loads for `model`: a catalog name or a .gguf path."""
    return str(model.model_path or model.model or DEFAULT_MODEL)


def budget_bytes(memory_mib: int | None) -> int:
    """The bytes loaded models may take together: `memory_mib`, else a share of RAM."""
    if memory_mib is not None:
        return memory_mib * MIB
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (OSError, ValueError):
        physical = 8 * 1024 * MIB
    return int(physical * DEFAULT_BUDGET_SHARE)


def estimate_bytes(model: ModelConfig, n_ctx: int, n_parallel: int = 1) -> int:
    """The memory `model` will take once loaded with `n_parallel` sequences of `n_ctx`
    tokens (0 for a model behind an HTTP backend). Reads the GGUF header when the file is
    here."""
    if model.provider != "llamacpp":
        return 0
    source = model_source(model)
    path = local_file(source)
    info = _header(path) if path is not None else None
    if path is not None:
        weights = path.stat().st_size
    else:
        try:
            weights = lookup(source).size
        except ModelError:
            weights = 0
    return weights + kv_bytes(info, n_ctx) * n_parallel + COMPUTE_BYTES


def kv_bytes(info: GGUFInfo | None, n_ctx: int) -> int:
    """The KV cache of `n_ctx` tokens, from the header's layer count and KV width."""
    if info is None:
        return n_ctx * UNKNOWN_KV_BYTES_PER_TOKEN
    arch = info.architecture
    meta = info.metadata
    layers = meta.get(f"{arch}.block_count")
    width = meta.get(f"{arch}.embedding_length")
    heads = meta.get(f"{arch}.attention.head_count")
    kv_heads = meta.get(f"{arch}.attention.head_count_kv", heads)
    numbers = (layers, width, heads, kv_heads)
    if not all(isinstance(n, int) and n > 0 for n in numbers):
        return n_ctx * UNKNOWN_KV_BYTES_PER_TOKEN
    assert isinstance(layers, int) and isinstance(width, int)
    assert isinstance(heads, int) and isinstance(kv_heads, int)
    head_size = meta.get(f"{arch}.attention.key_length", width // heads)
    kv_width = kv_heads * (head_size if isinstance(head_size, int) else width // heads)
    return 2 * layers * kv_width * n_ctx * KV_BYTES_PER_VALUE


def _header(path: Path) -> GGUFInfo | None:
    try:
        return read_gguf(path)
    except (ModelError, OSError, ValueError):
        return None  # not a GGUF we can read: the loader will say so
