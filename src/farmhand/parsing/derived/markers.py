"""Diffing renders, and the marker strings found by it.

Two renders that differ in one thing share a prefix and a suffix; what is left on each side
is what that thing looks like. The split is moved off the middle of a special token
(`<...>`, `[...]`), so a marker found is always whole: `<tool_call>` and `</tool_call>` share
`<`, which must not be cut off one of them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from farmhand.parsing.scan import WHITESPACE

# A marker's tokens: special tokens, and runs of other text, split at whitespace.
_TOKEN = re.compile(r"<[^<>\s]*>|\[[A-Z_]+\]|[^\s<\[]+|[<\[][^\s<\[]*")


@dataclass(frozen=True)
class Split:
    prefix: str
    left: str
    right: str
    suffix: str


def common_prefix(a: str, b: str) -> int:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[n] == b[n]:
        n += 1
    return n


def common_suffix(a: str, b: str) -> int:
    n = 0
    limit = min(len(a), len(b))
    while n < limit and a[-1 - n] == b[-1 - n]:
        n += 1
    return n


def whole_prefix(text: str, n: int) -> int:
    """`n`, moved back so `text[:n]` does not end inside a special token."""
    for opener, closer in (("<", ">"), ("[", "]")):
        last_open = text.rfind(opener, 0, n)
        inside = text[last_open:n]
        if last_open > text.rfind(closer, 0, n) and not _has_space(inside):
            n = min(n, last_open)
    return n


def whole_suffix(text: str, n: int) -> int:
    """`n` (a suffix length), shrunk so `text[-n:]` does not start inside a special token."""
    start = len(text) - n
    for opener, closer in (("<", ">"), ("[", "]")):
        first_close = text.find(closer, start)
        first_open = text.find(opener, start)
        inside = text[start:first_close]
        opens_first = first_open >= 0 and first_open < first_close
        if first_close >= 0 and not opens_first and not _has_space(inside):
            start = max(start, first_close + 1)
    return len(text) - start


def split(a: str, b: str) -> Split:
    """What `a` and `b` share at each end (whole tokens only), and what is left of each."""
    head = whole_prefix(a, common_prefix(a, b))
    a_rest, b_rest = a[head:], b[head:]
    tail = common_suffix(a_rest, b_rest)
    tail = min(whole_suffix(a_rest, tail), whole_suffix(b_rest, tail))
    return Split(
        a[:head],
        a_rest[: len(a_rest) - tail],
        b_rest[: len(b_rest) - tail],
        a_rest[len(a_rest) - tail :],
    )


def shared_start(a: str, b: str) -> str:
    """The whole tokens `a` and `b` start with."""
    return a[: whole_prefix(a, common_prefix(a, b))]


def shared_end(a: str, b: str) -> str:
    """The whole tokens `a` and `b` end with."""
    n = common_suffix(a, b)
    n = min(whole_suffix(a, n), whole_suffix(b, n))
    return a[len(a) - n :]


def _has_space(text: str) -> bool:
    return any(c in WHITESPACE for c in text)


def is_special(token: str) -> bool:
    """A special token: `<...>` or `[...]`."""
    return len(token) > 2 and (token[0], token[-1]) in (("<", ">"), ("[", "]"))


def tokens(marker: str) -> tuple[str, ...]:
    """A marker as the tokens it is matched by, whitespace between them left free."""
    return tuple(_TOKEN.findall(marker))


def strip(text: str) -> str:
    return text.strip(WHITESPACE)
