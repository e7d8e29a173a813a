"""Deciding, a character at a time, whether a `{` in text opens a bare Llama 3 call object.

A bare call carries no marker: `{"name": "<name>", "parameters": ...}` (or `"arguments"`,
with a `"type": "function"` key first at times) is a call, any other JSON is text. `CallHead`
reads the object's head token by token and says as soon as it can, so text that cannot be a
call is never held back waiting for the object to close.
"""

from __future__ import annotations

from collections.abc import Callable

from farmhand.parsing.scan import WHITESPACE, loads

_KEYS_ARGS = ("parameters", "arguments")
# The heads of a call object, as JSON tokens: punctuation, or the strings a string may be
# (an empty tuple: the name, any string).
_HEADS: tuple[tuple[str | tuple[str, ...], ...], ...] = (
    ("{", ("name",), ":", (), ",", _KEYS_ARGS, ":"),
    ("{", ("type",), ":", ("function",), ",", ("name",), ":", (), ",", _KEYS_ARGS, ":"),
)
_HEAD_LIMIT = 300


class CallHead:
    """Reads `{"name": "<name>", "parameters":` a character at a time, and says as soon as
    it can whether the text starts like that (so text that is not a call is not held)."""

    def __init__(self, accept_name: Callable[[str], bool]) -> None:
        self._accept_name = accept_name
        self._alive = list(range(len(_HEADS)))
        self._token = 0
        self._string: list[str] | None = None  # the string being read
        self._escape = False
        self._read = 0
        self.name = ""
        self.matched = False
        self.failed = False

    def feed(self, text: str, start: int = 0) -> int:
        """Read `text[start:]` until decided; the offset just past the last character read."""
        i = start
        while i < len(text) and not (self.matched or self.failed):
            self._step(text[i])
            i += 1
        return i

    def _expected(self) -> list[str | tuple[str, ...]]:
        return [_HEADS[h][self._token] for h in self._alive]

    def _step(self, ch: str) -> None:
        self._read += 1
        if self._read > _HEAD_LIMIT:
            self.failed = True
            return
        if self._string is not None:
            self._in_string(ch, self._string)
            return
        if ch in WHITESPACE:
            return
        if ch == '"' and any(isinstance(e, tuple) for e in self._expected()):
            self._alive = [h for h in self._alive if isinstance(_HEADS[h][self._token], tuple)]
            self._string = []
        elif ch in "{:," and ch in self._expected():
            self._alive = [h for h in self._alive if _HEADS[h][self._token] == ch]
            self._next()
        else:
            self.failed = True

    def _in_string(self, ch: str, chars: list[str]) -> None:
        if self._escape:
            self._escape = False
        elif ch == "\\":
            self._escape = True
        elif ch == '"':
            self._string = None
            self._end_string("".join(chars))
            return
        chars.append(ch)
        if any(_HEADS[h][self._token] for h in self._alive):  # a key: check it as it grows
            raw = "".join(chars)
            self._alive = [h for h in self._alive if _may_be(_HEADS[h][self._token], raw)]
            if not self._alive:
                self.failed = True

    def _end_string(self, raw: str) -> None:
        kept = []
        for h in self._alive:
            options = _HEADS[h][self._token]
            assert isinstance(options, tuple)
            if options and raw in options:
                kept.append(h)
            elif not options:
                name, ok = _json_string(raw)
                if ok and name and self._accept_name(name):
                    self.name = name
                    kept.append(h)
        self._alive = kept
        if not kept:
            self.failed = True
            return
        self._next()

    def _next(self) -> None:
        self._token += 1
        if any(len(_HEADS[h]) == self._token for h in self._alive):
            self.matched = True


def _may_be(options: str | tuple[str, ...], raw: str) -> bool:
    """Whether a string token that starts `raw` may still be one of `options` (any string
    for the name's empty tuple)."""
    return not options or any(o.startswith(raw) for o in options)


def _json_string(raw: str) -> tuple[str, bool]:
    value, ok = loads('"' + raw + '"')
    return (value, True) if ok and isinstance(value, str) else ("", False)
