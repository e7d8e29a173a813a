"""A call's arguments as JSON text written piece by piece, while the call streams.

Formats that write each argument on its own (XML-ish tags) know the JSON text of the
arguments a piece at a time: `{`, a key, a value (a string value a few characters at a time),
`}`. `JsonText` keeps the pieces and gives the text from any offset, so a parser reports only
what is new (see FamilyParser._call_progress), never rebuilding the whole text.
"""

from __future__ import annotations

import bisect
import json


def escaped(text: str) -> str:
    """`text` as the inside of a JSON string. JSON escapes each character on its own, so
    escaping piece by piece gives the text escaping the whole would."""
    return json.dumps(text, ensure_ascii=False)[1:-1]


class JsonText:
    def __init__(self) -> None:
        self._pieces: list[str] = []
        self._starts: list[int] = []  # where each piece starts in the whole text
        self.length = 0

    def add(self, piece: str) -> None:
        if piece:
            self._pieces.append(piece)
            self._starts.append(self.length)
            self.length += len(piece)

    def compact_from(self, start: int) -> str:
        """The text from character `start` on."""
        if start >= self.length:
            return ""
        at = bisect.bisect_right(self._starts, start) - 1
        head = self._pieces[at][start - self._starts[at] :]
        return head + "".join(self._pieces[at + 1 :])
