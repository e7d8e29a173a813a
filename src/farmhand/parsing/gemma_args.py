"""Gemma 4's argument objects, `{city:<|"|>Paris<|"|>,days:3,tags:[<|"|>a<|"|>]}`, as JSON.

Gemma 4 writes a call's arguments like JSON with bare keys, and strings quoted with the
`<|"|>` token (FunctionGemma the same, quoting with `<escape>`), in which anything may
appear (quotes, braces, `<tool_call|>`): so the end of the object is found by reading its
structure, never by searching for a marker. The object is translated to JSON text while it
streams; a bare value that is not a JSON number, true, false or null is taken as a string
(as the model meant it), and so is one whose argument the tool's schema says is a string.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from farmhand.parsing.arg_text import ArgumentText
from farmhand.parsing.broken import BrokenBody
from farmhand.parsing.scan import WHITESPACE, held_prefix, loads

QUOTE = '<|"|>'
_BARE_LIMIT = 256


class GemmaArguments:
    """Fed from the object's `{`: `feed` reads what it can and says how far it got."""

    def __init__(
        self, quote: str = QUOTE, types_of: Callable[[str], set[str]] | None = None
    ) -> None:
        self.quote = quote
        # The JSON types the tool's schema allows for an argument: a bare value of a string
        # argument stays a string (`zip:02134`, `id:123`).
        self._types_of = types_of
        self._key = ""  # the argument whose value is being read
        self.arguments = ArgumentText()
        self.written = BrokenBody()  # the start of the raw text, quoted by errors
        self.done = False
        self.invalid = False  # brackets that do not match: not an argument object
        self._stack: list[str] = []
        self._bare: list[str] = []  # a key or value written without quotes
        self._expect_key = False
        self._string = ""  # inside a string: QUOTE, or '"' for a JSON string
        self._escape = False

    def feed(self, text: str, start: int, final: bool) -> int:
        """Read `text[start:]`: the offset read up to (just past the object's `}` once
        `done`; before a possible start of `<|"|>` while it may still grow)."""
        end = self._read(text, start, final)
        self.written.add(text[start:end])
        return end

    def value(self) -> tuple[dict[str, Any] | None, str]:
        """The arguments once done, and their JSON text."""
        value, ok = loads(self.arguments.text)
        return (value if ok and isinstance(value, dict) else None), self.arguments.text

    def _read(self, text: str, i: int, final: bool) -> int:
        while i < len(text) and not (self.done or self.invalid):
            if self._string == self.quote:
                i = self._in_quote(text, i, final)
                if self._string:
                    return i
                continue
            ch = text[i]
            if self._string:
                self._in_json_string(ch)
            elif ch == self.quote[0] and text.startswith(self.quote, i):
                self._flush()
                self._string = self.quote
                self.arguments.add('"')
                i += len(self.quote)
                continue
            elif ch == self.quote[0] and not final and self._may_be_quote(text, i):
                return i  # may be the start of a quote: wait for more
            else:
                self._structure(ch)
            i += 1
        return i

    def _may_be_quote(self, text: str, i: int) -> bool:
        rest = text[i : i + len(self.quote)]
        return len(rest) < len(self.quote) and self.quote.startswith(rest)

    def _in_quote(self, text: str, i: int, final: bool) -> int:
        end = text.find(self.quote, i)
        if end < 0:
            held = held_prefix(text, (self.quote,))
            cut = len(text) if final else max(i, len(text) - held)
            self.arguments.add_string_part(text[i:cut])
            return cut
        self.arguments.add_string_part(text[i:end])
        self.arguments.add('"')
        self._string = ""
        return end + len(self.quote)

    def _in_json_string(self, ch: str) -> None:
        """A string written with JSON's own quotes: copied as it is."""
        self.arguments.add(ch)
        if self._escape:
            self._escape = False
        elif ch == "\\":
            self._escape = True
        elif ch == '"':
            self._string = ""

    def _structure(self, ch: str) -> None:
        if ch in WHITESPACE:
            self._flush()
        elif ch in "{[":
            self._flush()
            self._stack.append(ch)
            self.arguments.add(ch)
            self._expect_key = ch == "{"
        elif ch in "}]":
            self._flush()
            if not self._stack or "{[".index(self._stack.pop()) != "}]".index(ch):
                self.invalid = True
                return
            self.arguments.add(ch)
            self._expect_key = False
            self.done = not self._stack
        elif ch in ":,":
            self._flush()
            self.arguments.add(ch)
            self._expect_key = ch == "," and self._stack[-1:] == ["{"]
        elif ch == '"' and not self._bare:
            self._string = '"'
            self.arguments.add(ch)
        elif not self._stack or len(self._bare) >= _BARE_LIMIT:
            self.invalid = True
        else:
            self._bare.append(ch)

    def _flush(self) -> None:
        """A bare word ended: a key is quoted; a value is a JSON literal, or a string."""
        if not self._bare:
            return
        word = "".join(self._bare)
        self._bare = []
        if self._expect_key:
            self.arguments.add(json.dumps(word, ensure_ascii=False))
            self._key = word if len(self._stack) == 1 else self._key
            return
        _, ok = loads(word)
        if ok and len(self._stack) == 1 and self._types_of is not None:
            ok = "string" not in self._types_of(self._key)
        self.arguments.add(word if ok else json.dumps(word, ensure_ascii=False))
