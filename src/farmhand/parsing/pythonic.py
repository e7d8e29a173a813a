"""Families whose calls are a Python list of calls: `[f(a=1), g(b="x")]`.

LFM2 writes the list between `<|tool_call_start|>` and `<|tool_call_end|>`; Llama 4 writes
it bare at the start of its reply (or between `<|python_start|>` and `<|python_end|>`), so
there a reply that starts with `[name(` is calls, and any other reply is text. Each call's
keyword arguments are read as they stream (see `python_calls.KeywordArguments`), so a
client sees the name as soon as its `(` is written, then each argument. Text before the
start marker, and after the end marker, is text. What follows the start marker is a call
whatever it is: what cannot be read becomes a call with a parse error, so the model is told.
A call may also be written as a JSON object, `{"name": ..., "arguments": {...}}` (LFM2 told
to write JSON calls does).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import ClassVar

from farmhand.parsing.base import CursorParser, ParserOptions, call_from_object
from farmhand.parsing.broken import cut_off, not_a_call_object, unreadable
from farmhand.parsing.python_calls import KEYWORD_CALL, KeywordArguments
from farmhand.parsing.reader import CallObjectReader
from farmhand.parsing.scan import feed_from

CALL_HEAD = re.compile(r"([A-Za-z_][\w.\-]*)\s*\(")
_BARE_LIST = re.compile(r"\s*\[\s*([A-Za-z_][\w.\-]*)\s*\(")
_BARE_LIST_SO_FAR = re.compile(r"\s*(?:\[\s*(?:[A-Za-z_][\w.\-]*\s*)?)?")
# What may still grow into a call's head.
_HEAD_SO_FAR = re.compile(r"[A-Za-z_][\w.\-]*\s*\Z")
_HEAD_LIMIT = 256
_EXPECTED = f"a list of calls like [{KEYWORD_CALL}]"


class PythonicListParser(CursorParser):
    start_marker: ClassVar[str] = ""
    end_marker: ClassVar[str] = ""
    # A list of calls may also open the reply without the start marker.
    bare_list_at_start: ClassVar[bool] = False
    # What an error says the calls should look like.
    expected: ClassVar[str] = _EXPECTED

    def __init__(
        self, known_names: Collection[str] | None = None, *, options: ParserOptions | None = None
    ) -> None:
        super().__init__(known_names, options=options)
        # start | text | open | head | args | object | between | end | broken | after
        self._mode = "start" if self.bare_list_at_start else "text"
        self._bracketed = False
        self._name = ""
        self._args = KeywordArguments()
        self._object = CallObjectReader()

    def _in_start(self, final: bool) -> bool:
        """The reply's start: a bare list of calls, or text."""
        opens = opens_with_calls(self.buf[self._at : self._at + _HEAD_LIMIT], final)
        if opens is None:
            return False
        if opens:
            self._skip_whitespace()
        self._mode = "open" if opens else "text"
        return True

    def _in_text(self, final: bool) -> bool:
        if self._text_to_marker((self.start_marker,), final) is None:
            return False
        self._mode = "open"
        return True

    def _in_open(self, final: bool) -> bool:
        """Just after the start marker: the list's `[` (a lone call is accepted too)."""
        if not self._skip_whitespace() and not final:
            return False
        self._bracketed = self._starts("[")
        self._at += self._bracketed
        self._mode = "head"
        return True

    def _in_head(self, final: bool) -> bool:
        """Where a call's `name(` is expected."""
        if not self._skip_whitespace() and not final:
            return False
        if self._at_end_marker() or (self._bracketed and self._starts("]")):
            self._mode = "end"
            return True
        if self._starts("{"):
            self._object = CallObjectReader()
            self._mode = "object"
            return True
        match = CALL_HEAD.match(self.buf, self._at)
        if match:
            self._name = match.group(1)
            self._at = match.end()
            self._args = KeywordArguments()
            self._call_started(self._name)
            self._mode = "args"
            return True
        rest = self.buf[self._at : self._at + _HEAD_LIMIT]
        may_grow = not rest or _HEAD_SO_FAR.match(rest) or self._may_become(self.end_marker)
        if not final and len(rest) < _HEAD_LIMIT and may_grow:
            return False
        if not rest and final:
            self._call_done(cut_off(None, self.start_marker + ("[" if self._bracketed else "")))
            self._mode = "after"
            return False
        self._mode = "broken"
        return True

    def _in_args(self, final: bool) -> bool:
        args = self._args
        end = args.feed(self.buf, self._at)
        self._at = len(self.buf) if end is None else end
        self._call_progress(args.arguments)
        if end is None:
            if final:
                self._call_done(cut_off(self._name, f"{self._name}({args.written.text}"))
                self._mode = "after"
            return False
        self._call_done(args.call(self._name, self._name + "("))
        self._mode = "between"
        return True

    def _in_object(self, final: bool) -> bool:
        """A call written as JSON, `{"name": ..., "arguments": {...}}` (LFM2's JSON mode)."""
        reader = self._object
        end = feed_from(reader, self.buf, self._at)
        if reader.invalid:
            self._mode = "broken"
            return True
        self._at = len(self.buf) if end is None else end
        if reader.name is not None:
            self._call_started(reader.name)
            self._call_progress(reader)
        if end is None:
            if final:
                self._call_done(cut_off(reader.name, reader.scanner.raw))
                self._mode = "after"
            return False
        value, ok = reader.value()
        call = call_from_object(value) if ok else None
        self._call_done(call or not_a_call_object(reader.name, reader.scanner.raw, json_ok=ok))
        self._mode = "between"
        return True

    def _in_between(self, final: bool) -> bool:
        """After a call: `,` and the next, or the list's end."""
        if not self._skip_whitespace() and not final:
            return False
        if self._starts(","):
            self._at += 1
            self._mode = "head"
        elif self._bracketed and self._starts("]"):
            self._at += 1
            self._mode = "end"
        elif self._at_end_marker() or self._at >= len(self.buf):
            self._mode = "end"
        elif self._may_become(self.end_marker) and not final:
            return False
        else:
            self._mode = "broken"
        return True

    def _at_end_marker(self) -> bool:
        """The end marker is next (never, for a family without one: ToolACE's bare list)."""
        return bool(self.end_marker) and self._starts(self.end_marker)

    def _in_end(self, final: bool) -> bool:
        """The end marker, if written; what follows is text again."""
        if not self._step_over(self.end_marker, final):
            return False
        self._mode = "after"
        return True

    def _in_broken(self, final: bool) -> bool:
        """What is left of a list that is not one of calls: one call with an error."""
        body = self._read_to_stop((self.end_marker,) if self.end_marker else (), final)
        if body is None:
            return False
        self._call_done(unreadable(None, body, self.expected))
        self._mode = "end"
        return True


def opens_with_calls(text: str, final: bool) -> bool | None:
    """Whether a reply starting with `text` opens with a list of calls, `[name(`; None while
    it cannot be told yet."""
    if _BARE_LIST.match(text):
        return True
    if not final and len(text) < _HEAD_LIMIT and _BARE_LIST_SO_FAR.fullmatch(text):
        return None
    return False


def first_call_name(text: str) -> str | None:
    """The name of the first call of a list that opens `text` (`[name(`), else None."""
    match = _BARE_LIST.match(text)
    return match.group(1) if match else None
