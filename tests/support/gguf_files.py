"""Writes small GGUF files for tests: a header with typed key/values and tensor infos (no
tensor data: farmhand reads headers only), in the layout llama.cpp's files have."""

from __future__ import annotations

import struct
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64 = 4, 5, 6, 7, 8, 9, 10


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def _typed(value: Any) -> tuple[int, bytes]:
    if isinstance(value, bool):
        return BOOL, struct.pack("<?", value)
    if isinstance(value, int):
        return (
            (UINT32, struct.pack("<I", value))
            if value < 2**32
            else (
                UINT64,
                struct.pack("<Q", value),
            )
        )
    if isinstance(value, float):
        return FLOAT32, struct.pack("<f", value)
    if isinstance(value, str):
        return STRING, _string(value)
    if isinstance(value, list):
        kind = _typed(value[0])[0] if value else UINT32
        items = b"".join(_typed(v)[1] for v in value)
        return ARRAY, struct.pack("<IQ", kind, len(value)) + items
    raise TypeError(f"no GGUF type for {value!r}")


def write_gguf(
    path: Path,
    metadata: Mapping[str, Any],
    tensors: Sequence[tuple[str, Sequence[int]]] = (),
    *,
    version: int = 3,
) -> Path:
    out = bytearray(b"GGUF")
    out += struct.pack("<IQQ", version, len(tensors), len(metadata))
    for key, value in metadata.items():
        kind, data = _typed(value)
        out += _string(key) + struct.pack("<I", kind) + data
    for name, dims in tensors:
        out += _string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in dims)
        out += struct.pack("<IQ", 0, 0)  # type F32, offset 0
    path.write_bytes(bytes(out))
    return path


TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n"
    "{% if enable_thinking is defined and not enable_thinking %}<think></think>{% endif %}"
    "{% endif %}"
)


def tiny_model(path: Path, *, template: str = TEMPLATE) -> Path:
    """A header like a small qwen3 chat model's, Q4_K_M, 1,234,567 parameters."""
    return write_gguf(
        path,
        {
            "general.architecture": "qwen3",
            "general.name": "Tiny Test",
            "general.file_type": 15,
            "general.license": "apache-2.0",
            "qwen3.context_length": 40960,
            "qwen3.rope.freq_base": 1000000.0,
            "tokenizer.ggml.tokens": [f"t{i}" for i in range(100)],
            "tokenizer.ggml.add_bos_token": False,
            "tokenizer.chat_template": template,
        },
        [("token_embd.weight", [1000, 1000]), ("output_norm.weight", [234567])],
    )
