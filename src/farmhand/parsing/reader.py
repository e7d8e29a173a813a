"""Reading one tool-call JSON object while it streams.

The object's end is found by a JsonScanner; while it is open, the call's name (and id) is
read from the object's head as soon as it is complete, and the arguments value is scanned on
its own so its partial text can be shown.
"""

from __future__ import annotations

import re
from typing import Any

from farmhand.parsing.scan import JsonScanner, loads

# How far into an object its name and the start of its arguments are looked for: the head
# of a call is short, and bounding the search keeps a long object linear.
_HEAD_LIMIT = 512
_STRING = r'"((?:[^"\\]|\\.)*)"'

HERMES_NAME = re.compile(r'\s*\{\s*"name"\s*:\s*' + _STRING)
HERMES_ARGS = re.compile(
    r'\s*\{\s*"name"\s*:\s*"(?:[^"\\]|\\.)*"\s*,\s*"(?:arguments|parameters)"\s*:'
)


class CallObjectReader:
    """Reads one call object, e.g. `{"name": "f", "arguments": {...}}`.

    `name_re` must match the object's head up to the end of the name (group `name`, optional
    group `id`); `args_re` up to the colon before the arguments value. Both are anchored at
    the object's first character (leading whitespace included).
    """

    def __init__(
        self, name_re: re.Pattern[str] = HERMES_NAME, args_re: re.Pattern[str] = HERMES_ARGS
    ) -> None:
        self.scanner = JsonScanner()
        self._name_re = name_re
        self._args_re = args_re
        self._head: list[str] = []
        self._head_len = 0
        self.name: str | None = None
        self.call_id: str | None = None
        self._args: JsonScanner | None = None
        self._head_done = False

    @property
    def done(self) -> bool:
        return self.scanner.done

    @property
    def invalid(self) -> bool:
        return self.scanner.invalid

    def compact_from(self, start: int) -> str:
        """The arguments' compact text from character `start` on (see JsonScanner)."""
        return self._args.compact_from(start) if self._args else ""

    def feed(self, text: str) -> int | None:
        """Consume `text`; the offset just past the object's end, or None for more."""
        end = self.scanner.feed(text)
        consumed = text if end is None else text[:end]
        if self._args is not None:
            self._args.feed(consumed)
        elif not self._head_done:
            self._read_head(consumed)
        return end

    def value(self) -> tuple[Any, bool]:
        """The decoded object once done: `(value, True)`, or `(None, False)` if not JSON."""
        return loads(self.scanner.raw)

    def _read_head(self, consumed: str) -> None:
        self._head.append(consumed)
        self._head_len += len(consumed)
        head = "".join(self._head)
        if self.name is None:
            match = self._name_re.match(head)
            if match:
                self.name = _unescape(
                    match.group("name") if "name" in match.groupdict() else match.group(1)
                )
                if "id" in match.groupdict() and match.group("id") is not None:
                    self.call_id = _unescape(match.group("id"))
        if self.name is not None:
            match = self._args_re.match(head)
            if match:
                self._args = JsonScanner()
                self._args.feed(head[match.end() :])
                self._head_done = True
                return
        if self._head_len > _HEAD_LIMIT:
            self._head_done = True
        if len(self._head) > 1:
            self._head = [head]


def _unescape(text: str) -> str:
    value, ok = loads('"' + text + '"')
    return value if ok and isinstance(value, str) else text
