"""What a GGUF file says about itself: its metadata and its parameter count, read from the
file's header without loading the model.

llama.cpp's own reader (`Llama(...).metadata`) needs the model loaded and gives every value
as text; Ollama's `/api/show` reports typed values (`"qwen2.context_length": 32768`), and a
listing of several models must not load them all. The header is small and its layout
documented (magic `GGUF`, version, tensor count, key/value count, the key/values, then one
info per tensor), so it is read here directly. Long arrays (the tokenizer's 150,000 tokens)
are skipped unless asked for: a listing needs their length at most.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from farmhand.errors import ModelError

MAGIC = b"GGUF"
KEEP_ARRAYS_UP_TO = 64
"""Arrays longer than this are returned as None (their length is in `array_lengths`)."""

# Scalar value types of the format, by their type id: struct code and size.
_SCALARS: dict[int, tuple[str, int]] = {
    0: ("B", 1),  # uint8
    1: ("b", 1),  # int8
    2: ("H", 2),  # uint16
    3: ("h", 2),  # int16
    4: ("I", 4),  # uint32
    5: ("i", 4),  # int32
    6: ("f", 4),  # float32
    7: ("?", 1),  # bool
    10: ("Q", 8),  # uint64
    11: ("q", 8),  # int64
    12: ("d", 8),  # float64
}
_STRING, _ARRAY = 8, 9

# llama.cpp's `general.file_type` (enum llama_ftype) as Ollama names the quantization.
FILE_TYPES = {
    0: "F32", 1: "F16", 2: "Q4_0", 3: "Q4_1", 7: "Q8_0", 8: "Q5_0", 9: "Q5_1",
    10: "Q2_K", 11: "Q3_K_S", 12: "Q3_K_M", 13: "Q3_K_L", 14: "Q4_K_S", 15: "Q4_K_M",
    16: "Q5_K_S", 17: "Q5_K_M", 18: "Q6_K", 19: "IQ2_XXS", 20: "IQ2_XS", 21: "Q2_K_S",
    22: "IQ3_XS", 23: "IQ3_XXS", 24: "IQ1_S", 25: "IQ4_NL", 26: "IQ3_S", 27: "IQ3_M",
    28: "IQ2_S", 29: "IQ2_M", 30: "IQ4_XS", 31: "IQ1_M", 32: "BF16", 36: "TQ1_0",
    37: "TQ2_0", 38: "MXFP4",
}  # fmt: skip


@dataclass(frozen=True)
class GGUFInfo:
    """A GGUF's header: its key/values (long arrays as None) and its size in parameters."""

    version: int
    metadata: dict[str, Any]
    parameter_count: int
    array_lengths: dict[str, int] = field(default_factory=dict)

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture") or "")

    @property
    def chat_template(self) -> str | None:
        template = self.metadata.get("tokenizer.chat_template")
        return template if isinstance(template, str) else None

    @property
    def context_length(self) -> int | None:
        value = self.metadata.get(f"{self.architecture}.context_length")
        return value if isinstance(value, int) else None

    @property
    def quantization(self) -> str:
        """Ollama's quantization level, e.g. "Q4_K_M" (from `general.file_type`)."""
        kind = self.metadata.get("general.file_type")
        if isinstance(kind, int):
            return FILE_TYPES.get(kind, f"file type {kind}")
        return ""

    @property
    def parameter_size(self) -> str:
        """Ollama's rounded size, e.g. "494.03M" or "1.54B"."""
        return parameter_size(self.parameter_count)


def parameter_size(count: int) -> str:
    if count >= 1_000_000_000:
        return f"{count / 1e9:.2f}B"
    if count >= 1_000_000:
        return f"{count / 1e6:.2f}M"
    return str(count) if count else ""


def read_gguf(path: Path, *, keep_arrays: int = KEEP_ARRAYS_UP_TO) -> GGUFInfo:
    """The header of the GGUF at `path`; ModelError when it is not one."""
    try:
        with path.open("rb") as f:
            return _Reader(f, keep_arrays).read()
    except OSError as exc:
        raise ModelError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (struct.error, UnicodeDecodeError, ValueError) as exc:
        raise ModelError(f"{path} is not a valid GGUF file ({exc})") from None


class _Reader:
    def __init__(self, f: BinaryIO, keep_arrays: int) -> None:
        self.f = f
        self.keep_arrays = keep_arrays
        self.array_lengths: dict[str, int] = {}

    def read(self) -> GGUFInfo:
        if self.f.read(4) != MAGIC:
            raise ValueError("it does not start with GGUF")
        version = self._scalar("I")
        if version < 2:
            raise ValueError(f"GGUF version {version} is too old")
        tensors, pairs = self._scalar("Q"), self._scalar("Q")
        metadata: dict[str, Any] = {}
        for _ in range(pairs):
            key = self._string()
            metadata[key] = self._value(self._scalar("I"), key)
        parameters = 0
        for _ in range(tensors):
            self._string()  # the tensor's name
            count = 1
            for _ in range(self._scalar("I")):
                count *= self._scalar("Q")
            self._skip(4 + 8)  # its type and offset
            parameters += count
        return GGUFInfo(version, metadata, parameters, self.array_lengths)

    def _skip(self, size: int) -> None:
        self.f.seek(size, 1)

    def _scalar(self, code: str) -> Any:
        size = struct.calcsize("<" + code)
        data = self.f.read(size)
        if len(data) != size:
            raise ValueError("the file ends inside its header")
        return struct.unpack("<" + code, data)[0]

    def _string(self) -> str:
        length = self._scalar("Q")
        data = self.f.read(length)
        if len(data) != length:
            raise ValueError("the file ends inside its header")
        return data.decode("utf-8")

    def _skip_string(self) -> None:
        self._skip(self._scalar("Q"))

    def _value(self, kind: int, key: str) -> Any:
        if kind == _STRING:
            return self._string()
        if kind in _SCALARS:
            return self._scalar(_SCALARS[kind][0])
        if kind != _ARRAY:
            raise ValueError(f"unknown value type {kind} for key {key!r}")
        item_kind, length = self._scalar("I"), self._scalar("Q")
        self.array_lengths[key] = length
        if length <= self.keep_arrays:
            return [self._value(item_kind, key) for _ in range(length)]
        skip: Callable[[], object]
        if item_kind in _SCALARS:
            self._skip(_SCALARS[item_kind][1] * length)
            return None
        skip = self._skip_string if item_kind == _STRING else lambda: self._value(item_kind, key)
        for _ in range(length):
            skip()
        return None
