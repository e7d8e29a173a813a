"""A stand-in embedder for the store's logic: each word hashed into one of 64 dimensions,
so texts that share words are near. (The real embedded model is tested in tests/e2e.)"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

DIMENSIONS = 64


class WordVectors:
    def __init__(self, name: str = "word-vectors", dimensions: int = DIMENSIONS) -> None:
        self.name = name
        self.dimensions = dimensions
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        return [vector(text, self.dimensions) for text in texts]


def vector(text: str, dimensions: int = DIMENSIONS) -> list[float]:
    out = [0.0] * dimensions
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        out[hashlib.sha256(word.encode()).digest()[0] % dimensions] += 1.0
    norm = math.sqrt(sum(x * x for x in out)) or 1.0
    return [x / norm for x in out]
