"""Incremental scanning helpers shared by the family parsers.

Every helper here looks at each input character a bounded number of times, so a parser
built from them stays linear in the length of the output however it is chunked.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import cache
from typing import Any, Protocol

WHITESPACE = " \t\r\n"


def held_prefix(text: str, markers: Iterable[str]) -> int:
    """Length of the longest suffix of `text` that could still grow into one of `markers`."""
    prefixes, longest, last_chars = _prefixes(tuple(markers))
    if not text or text[-1] not in last_chars:
        return 0  # the common case, decided by one lookup
    for n in range(min(longest, len(text)), 0, -1):
        if text[-n:] in prefixes:
            return n
    return 0


@cache
def _prefixes(markers: tuple[str, ...]) -> tuple[frozenset[str], int, frozenset[str]]:
    """Every proper prefix of the markers, the longest one's length, and their last chars."""
    prefixes = frozenset(m[:n] for m in markers for n in range(1, len(m)))
    longest = max((len(p) for p in prefixes), default=0)
    return prefixes, longest, frozenset(p[-1] for p in prefixes)


def find_first(text: str, markers: Iterable[str], start: int = 0) -> tuple[int, str] | None:
    """The earliest (index, marker) of any marker in `text[start:]`; ties go to the longest."""
    best: tuple[int, str] | None = None
    for marker in markers:
        index = text.find(marker, start)
        if index < 0:
            continue
        if best is None or index < best[0] or (index == best[0] and len(marker) > len(best[1])):
            best = (index, marker)
    return best


class JsonScanner:
    """Finds where one JSON object, array or string ends, fed a piece at a time.

    It keeps the value's compact text (whitespace outside strings dropped), which is how a
    partial value is shown while it is still being written.
    """

    def __init__(self) -> None:
        self.depth = 0
        self.in_string = False
        self.escape = False
        self.started = False
        self.done = False
        self.invalid = False  # the value does not start like an object, array or string
        self._raw: list[str] = []
        self._compact: list[str] = []

    @property
    def raw(self) -> str:
        return "".join(self._raw)

    @property
    def compact(self) -> str:
        return "".join(self._compact)

    def compact_from(self, start: int) -> str:
        """The compact text from character `start` on: what a partial view has not shown
        yet, without rebuilding all of it."""
        return "".join(self._compact[start:])

    def feed(self, text: str) -> int | None:
        """Consume `text`; return the offset just past the value's end, or None for more."""
        if self.done or self.invalid:
            return 0 if self.done else None
        for i, ch in enumerate(text):
            if not self.started:
                if ch in WHITESPACE:
                    continue
                if ch not in '{["':
                    self.invalid = True
                    return None
                self.started = True
            if self._step(ch):
                self.done = True
                self._raw.append(text[: i + 1])
                return i + 1
        self._raw.append(text)
        return None

    def _step(self, ch: str) -> bool:
        """Advance by one character; True when the value just closed."""
        if self.in_string:
            self._compact.append(ch)
            if self.escape:
                self.escape = False
            elif ch == "\\":
                self.escape = True
            elif ch == '"':
                self.in_string = False
                return self.depth == 0
            return False
        if ch in WHITESPACE:
            return False
        self._compact.append(ch)
        if ch == '"':
            self.in_string = True
        elif ch in "{[":
            self.depth += 1
        elif ch in "}]":
            self.depth -= 1
            return self.depth == 0
        return False


def loads(text: str) -> tuple[Any, bool]:
    """`(value, True)` if `text` is JSON, else `(None, False)`."""
    try:
        return json.loads(text), True
    except (json.JSONDecodeError, RecursionError):
        return None, False


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# Searching and feeding in bounded windows, for formats delimited by special tokens.


class Feedable(Protocol):
    """A JsonScanner or a CallObjectReader."""

    def feed(self, text: str) -> int | None: ...

    @property
    def invalid(self) -> bool: ...


# How much text is searched for a stop token at a time: a value that ends early must not
# cost a search of all the text after it.
_WINDOW = 4096


def find_bounded(text: str, markers: Sequence[str], start: int, end: int) -> tuple[int, str] | None:
    """The earliest (index, marker) of any marker starting in `text[start:end]`; ties go to
    the longest."""
    best: tuple[int, str] | None = None
    for marker in markers:
        index = text.find(marker, start, end + len(marker) - 1)
        if index < 0:
            continue
        if best is None or index < best[0] or (index == best[0] and len(marker) > len(best[1])):
            best = (index, marker)
    return best


def find_near(text: str, markers: Sequence[str], start: int = 0) -> tuple[int, str] | None:
    """Like `scan.find_first`, searching a window at a time: it costs the distance to the
    first marker found, not a search of all the text for each marker."""
    while True:
        end = start + _WINDOW
        found = find_bounded(text, markers, start, end)
        if found is not None or end >= len(text):
            return found
        start = end


def feed_until(
    target: Feedable, text: str, stops: Sequence[str], final: bool, start: int = 0
) -> tuple[int | None, int, bool]:
    """Feed `text[start:]` to `target` until its value ends, but never a stop token nor what
    may be its start: `(end, fed, stopped)`, where `end` is the offset just past the value
    (None if it did not end), `fed` the offset up to which text was given, `stopped` whether
    a stop token came first. Searches a bounded window past what is fed, so the cost is
    linear in what is fed."""
    longest = max(map(len, stops))
    pos = start
    while True:
        window = pos + _WINDOW
        at_end = window + longest >= len(text)
        if at_end:
            window = len(text)
        found = find_bounded(text, stops, pos, window)
        if found is not None:
            limit = found[0]
        elif at_end:
            limit = len(text) if final else max(pos, len(text) - held_prefix(text, stops))
        else:
            limit = window
        end = target.feed(text[pos:limit])
        if end is not None:
            return pos + end, pos + end, False
        if target.invalid or found is not None or at_end:
            return None, pos if target.invalid else limit, found is not None
        pos = limit


def feed_from(target: Feedable, text: str, start: int) -> int | None:
    """Feed `text[start:]` to `target` a window at a time (a long rest is not copied for each
    value, as with `feed_until`, but with no stop token: the value's own end is all that ends
    it): the offset just past the value's end, or None when it has not ended, or `target`
    found it invalid (having consumed nothing of it)."""
    pos = start
    while pos < len(text):
        piece = text[pos : pos + _WINDOW]
        end = target.feed(piece)
        if end is not None:
            return pos + end
        if target.invalid:
            return None
        pos += len(piece)
    return None
