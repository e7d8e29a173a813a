"""Glob patterns (`*`, `?`, `[...]`, `[!...]`, as fnmatch reads them; an empty range such
as `[c-a]` drops out, and a `!` after it stays a member, where fnmatch makes it negate the
class) matched without backtracking.

fnmatch turns a pattern into one regular expression, compiled (and cached) per pattern:
`*a` repeated 400,000 times held the event loop for 12 s. Here the stars cut the pattern
into segments that each match a fixed number of characters; the first must match at the
start, the last at the end, and each one between at its leftmost place after the one before
(for fixed-length segments the leftmost place is never worse than a later one). Each segment
is sought once, so a match costs at most the text's length times the pattern's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_NOTHING = "(?!)"  # a class fnmatch would never match, such as [z-a]


@dataclass(frozen=True)
class Glob:
    """A compiled glob: `Glob.parse("*file*").match("read_file")`."""

    segments: tuple[re.Pattern[str], ...]
    """The pattern between its stars, each matching a fixed number of characters."""
    lengths: tuple[int, ...]
    starred: bool
    """Whether the pattern has a star at all (without one, it must match the whole text)."""
    wildcards: int
    """How many `*` (runs of them count once), `?` and `[...]` the pattern holds."""

    @classmethod
    def parse(cls, pattern: str) -> Glob:
        parts: list[list[str]] = [[]]
        wildcards = 0
        index = 0
        while index < len(pattern):
            char = pattern[index]
            index += 1
            if char == "*":
                if parts[-1] or len(parts) == 1:
                    wildcards += 1
                    parts.append([])
            elif char == "?":
                wildcards += 1
                parts[-1].append(".")
            elif char == "[" and (end := _class_end(pattern, index)) is not None:
                wildcards += 1
                parts[-1].append(_class(pattern[index:end]))
                index = end + 1
            else:
                parts[-1].append(re.escape(char))
        return cls(
            segments=tuple(re.compile("".join(p), re.DOTALL) for p in parts),
            lengths=tuple(len(p) for p in parts),
            starred=len(parts) > 1,
            wildcards=wildcards,
        )

    def match(self, text: str) -> bool:
        """Whether the whole of `text` matches the pattern."""
        first = self.segments[0]
        if not self.starred:
            return first.fullmatch(text) is not None
        if first.match(text) is None:
            return False
        position = self.lengths[0]
        for segment in self.segments[1:-1]:
            found = segment.search(text, position)
            if found is None:
                return False
            position = found.end()
        start = len(text) - self.lengths[-1]
        return start >= position and self.segments[-1].fullmatch(text, start) is not None


def _class_end(pattern: str, start: int) -> int | None:
    """Where the class opened before `start` closes (a `]` right after `[` or `[!` is a
    member), or None when it never does and the `[` is a plain character."""
    index = start
    if index < len(pattern) and pattern[index] == "!":
        index += 1
    if index < len(pattern) and pattern[index] == "]":
        index += 1
    end = pattern.find("]", index)
    return end if end >= 0 else None


def _class(members: str) -> str:
    negated = members.startswith("!")
    if negated:
        members = members[1:]
    body = ""
    index = 0
    while index < len(members):
        if index + 2 < len(members) and members[index + 1] == "-":
            low, high = members[index], members[index + 2]
            if low > high:
                index += 3
                continue  # an empty range, as fnmatch reads it
            body += f"{re.escape(low)}-{re.escape(high)}"
            index += 3
        else:
            body += re.escape(members[index])
            index += 1
    if not body:
        return "." if negated else _NOTHING
    return f"[{'^' if negated else ''}{body}]"
