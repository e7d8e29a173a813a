"""A JSON array of call objects inside tags: `<TAG>[{"name": ..., "arguments": {...}}]</TAG>`.

Nemotron Nano v2 writes `<TOOLCALL>[...]</TOOLCALL>`, Hunyuan A13B `<tool_calls>[...]</tool_calls>`
inside the `<answer>...</answer>` that wraps its reply. The array is read by the shared
call-array reader; this adds the closing tag, wrapper tags that are dropped from the text, and
whitespace before a tag, which goes with the tag.
"""

from __future__ import annotations

from typing import ClassVar

from farmhand.parsing.call_array import CallArrayParser
from farmhand.parsing.scan import WHITESPACE, find_first, held_prefix


class TaggedArrayParser(CallArrayParser):
    """Set `markers` (the opening tags), `closing` and `wrappers` on the subclass."""

    closing: ClassVar[str] = ""
    wrappers: ClassVar[tuple[str, ...]] = ()  # tags around the reply, dropped

    def _in_text(self, final: bool) -> bool:
        tags = (*self.markers, *self.wrappers)
        found = find_first(self.buf, tags)
        if found is None:
            end = len(self.buf) if final else len(self.buf) - held_prefix(self.buf, tags)
            if not final:
                end = len(self.buf[:end].rstrip(WHITESPACE))
            self._text(self.buf[:end])
            self.buf = self.buf[end:]
            return False
        at, tag = found
        self._text(self.buf[:at].rstrip(WHITESPACE))
        self.buf = self.buf[at + len(tag) :]
        self._mode = "after" if tag in self.wrappers else "open"
        return True

    def _in_after(self, final: bool) -> bool:
        """After the array: its closing tag, if written, then text again."""
        stripped = self.buf.lstrip(WHITESPACE)
        if self.closing and stripped.startswith(self.closing):
            self.buf = stripped[len(self.closing) :]
            return True
        if stripped and self.closing.startswith(stripped) and not final:
            self.buf = stripped
            return False
        return super()._in_after(final)
