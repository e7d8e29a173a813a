"""A call's arguments as JSON text that grows a piece at a time.

Formats that do not write their arguments as JSON (Python keyword arguments, Gemma 4's
quoted values, raw code) are translated while they stream: each piece of JSON text that
became certain is added here, and the family shows it as the call's partial arguments
(`compact_from` gives what a partial view has not shown yet, without rebuilding the whole).
"""

from __future__ import annotations

import bisect
import json
from typing import Any


class ArgumentText:
    def __init__(self, start: str = "") -> None:
        self._pieces: list[str] = []
        self._starts: list[int] = []  # where each piece starts in the whole text
        self._length = 0
        self.add(start)

    def add(self, piece: str) -> None:
        if piece:
            self._pieces.append(piece)
            self._starts.append(self._length)
            self._length += len(piece)

    def add_string_part(self, text: str) -> None:
        """A part of a JSON string's contents: JSON escapes each character on its own, so
        escaping piece by piece gives the same text as escaping the whole."""
        self.add(json.dumps(text, ensure_ascii=False)[1:-1])

    def add_value(self, value: Any) -> None:
        self.add(json.dumps(value, ensure_ascii=False))

    def __len__(self) -> int:
        return self._length

    @property
    def text(self) -> str:
        return "".join(self._pieces)

    def compact_from(self, start: int) -> str:
        if start >= self._length:
            return ""
        at = bisect.bisect_right(self._starts, start) - 1
        head = self._pieces[at][start - self._starts[at] :]
        return head + "".join(self._pieces[at + 1 :])
