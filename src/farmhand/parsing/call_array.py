"""A family whose calls are a JSON array of call objects after a marker.

Mistral Nemo writes `[TOOL_CALLS]` and then the array; Firefunction v2 writes ` functools[`,
which opens the array itself; Granite 3, Apriel, GigaChat and Apertus have their own markers
(and Apertus its own call objects, `{"NAME": {arguments}}`). Text before the marker, and
after the array, is text.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Any, ClassVar

from farmhand.messages import ToolCall
from farmhand.parsing.base import FamilyParser, ParserOptions, call_from_object
from farmhand.parsing.broken import CALL_OBJECT, BrokenBody, cut_off, not_a_call_object, unreadable
from farmhand.parsing.reader import HERMES_ARGS, HERMES_NAME, CallObjectReader
from farmhand.parsing.scan import WHITESPACE, JsonScanner, find_first, held_prefix


class CallArrayParser(FamilyParser):
    """A family whose calls are a JSON array of call objects after a marker.

    Each object is a call as soon as it closes; one that is not a call object becomes a call
    with a parse error, and so does what is left of an array that stops being one.
    """

    # What starts the calls (the earliest found wins), and whether it ends with the array's
    # `[` (" functools[") or is followed by the array ("[TOOL_CALLS]", then `[`); a marker
    # whose last character is `[` opens the array in any case.
    markers: ClassVar[tuple[str, ...]] = ()
    marker_opens_array: ClassVar[bool] = False
    # Tags around the reply that are not text (Granite's <response>), dropped when reasoning
    # is split out (with reasoning_format none the reply is kept as written).
    reply_tags: ClassVar[tuple[str, ...]] = ()
    # Tokens that are never text (a closing tag after the array, turn separators).
    dropped_tokens: ClassVar[tuple[str, ...]] = ()
    # How a call object's name and the start of its arguments are read while it streams.
    name_re: ClassVar[re.Pattern[str]] = HERMES_NAME
    args_re: ClassVar[re.Pattern[str]] = HERMES_ARGS

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        self._mode = "text"  # text | open | items | object | separator | broken | after
        self._array: JsonScanner | None = None  # the whole array: where it ends
        self._reader: CallObjectReader | None = None
        self._broken = BrokenBody()
        self._array_calls = 0  # the calls read in the array being read

    def _find_marker(self, text: str) -> tuple[int, int] | None:
        """Where the text before the first marker ends, and where the marker ends."""
        best: tuple[int, int] | None = None
        for marker in self.markers:
            at = text.find(marker)
            if at >= 0 and (best is None or at < best[0]):
                best = (at, at + len(marker))
        return best

    def _in_text(self, final: bool) -> bool:
        tags = (self.reply_tags if self._thinking is not None else ()) + self.dropped_tokens
        found = self._find_marker(self.buf)
        tag = find_first(self.buf[: found[0]] if found else self.buf, tags)
        if tag is not None:
            self._text(self.buf[: tag[0]])
            self.buf = self.buf[tag[0] :]
            if not final and any(m.startswith(self.buf) for m in self.markers):
                return False  # the token may be the start of a marker (GigaChat's)
            self.buf = self.buf[len(tag[1]) :]
            return True
        if found is not None:
            self._text(self.buf[: found[0]])
            opens_array = self.marker_opens_array or self.buf[found[1] - 1] == "["
            self.buf = self.buf[found[1] :]
            if opens_array:
                self._open_array("[")
            else:
                self._mode = "open"
            return True
        held = held_prefix(self.buf, (*self.markers, *tags))
        end = len(self.buf) if final else len(self.buf) - held
        self._text(self.buf[:end])
        self.buf = self.buf[end:]
        return False

    def _in_open(self, final: bool) -> bool:
        """After a marker that does not open the array itself: `[`, or a lone object."""
        self.buf = self.buf.lstrip(WHITESPACE)
        if not self.buf:
            if final:
                self._call_done(cut_off(None, self.markers[0]))  # the output ended at it
            return False
        if self.buf.startswith("["):
            self.buf = self.buf[1:]
            self._open_array("[")
        elif self.buf.startswith("{"):
            self._array = None  # calls without the brackets
            self._mode = "items"
        else:
            self._broken_start()
        return True

    def _open_array(self, bracket: str) -> None:
        self._array_calls = 0
        self._array = JsonScanner()
        self._array.feed(bracket)
        self._mode = "items"

    def _consume(self, n: int) -> None:
        """Consume `n` characters of the array."""
        if self._array is not None:
            self._array.feed(self.buf[:n])
        self.buf = self.buf[n:]

    def _in_items(self, final: bool) -> bool:
        """Where an element may start: a call object, or the end of the array."""
        stripped = len(self.buf) - len(self.buf.lstrip(WHITESPACE))
        self._consume(stripped)
        if not self.buf:
            if final:
                self._end_cut_off()
            return False
        if self.buf[0] == "{":
            self._reader = CallObjectReader(self.name_re, self.args_re)
            self._mode = "object"
        elif self.buf[0] == "]" and self._array is not None:
            self._consume(1)
            self._mode = "after"
        elif self._array is None:
            self._mode = "after"  # a run of bare objects ended
        else:
            self._broken_start()
        return True

    def _in_object(self, final: bool) -> bool:
        reader = self._reader
        assert reader is not None
        end = reader.feed(self.buf)
        self._consume(len(self.buf) if end is None else end)
        if reader.name is not None:
            self._call_started(reader.name, reader.call_id)
        self._call_progress(reader)
        if end is None:
            if final:
                self._call_done(cut_off(reader.name, reader.scanner.raw))
            return False
        value, ok = reader.value()
        call = self._call_of(value) if ok else None
        self._call_done(call or not_a_call_object(reader.name, reader.scanner.raw, json_ok=ok))
        self._array_calls += 1
        self._mode = "separator"
        return True

    def _call_of(self, value: Any) -> ToolCall | None:
        """The call a decoded object is, or None if it is not one."""
        return call_from_object(value)

    def _in_separator(self, final: bool) -> bool:
        stripped = len(self.buf) - len(self.buf.lstrip(WHITESPACE))
        self._consume(stripped)
        if not self.buf:
            if final and self._array is not None:
                self._end_cut_off()
            return False
        if self.buf[0] == ",":
            self._consume(1)
            self._mode = "items"
        elif self._array is not None and self.buf[0] == "]":
            self._consume(1)
            self._mode = "after"
        elif self._array is None:
            self._mode = "items" if self.buf[0] == "{" else "after"
        else:
            self._broken_start()
        return True

    def _end_cut_off(self) -> None:
        """The output ended inside the array, between calls: the calls read stand; an array
        it ended in before any call is a call cut off."""
        if not self._array_calls:
            self._call_done(cut_off(None, "["))
        self._mode = "after"

    def _broken_start(self) -> None:
        self._broken = BrokenBody()
        self._mode = "broken"

    def _in_broken(self, final: bool) -> bool:
        """What is left of an array that is not one of calls: a call with a parse error
        showing it, to the array's end (or the output's, without an array)."""
        array = self._array
        end = array.feed(self.buf) if array is not None else None
        taken = len(self.buf) if end is None else end
        self._broken.add(self.buf[:taken])
        self.buf = self.buf[taken:]
        if end is None and not final:
            return False
        self._call_done(unreadable(None, self._broken.text, f"a JSON array of {CALL_OBJECT}"))
        self._mode = "after"
        return True
