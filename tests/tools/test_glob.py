"""Glob patterns matched without backtracking: the same answers as fnmatch, with each
segment between stars sought once, whatever the pattern."""

from __future__ import annotations

import fnmatch
import random
import re

import pytest

from farmhand.tools.glob import Glob


@pytest.mark.parametrize(
    ("pattern", "text", "matched"),
    [
        ("*", "", True),
        ("*file*", "read_file", True),
        ("read_*", "read_file", True),
        ("read_*", "write_file", False),
        ("?ead*", "read", True),
        ("*.txt", "a.txt.bak", False),
        ("a*b*c", "aXbYbZc", True),
        ("a*b*c", "acb", False),
        ("[rw]ead", "wead", True),
        ("[!rw]ead", "read", False),
        ("[a-c]x", "bx", True),
        ("[]]x", "]x", True),
        ("[z-a]x", "zx", False),
        ("[abc", "[abc", True),
        ("a\\b", "a\\b", True),
        ("**a**", "xax", True),
    ],
)
def test_globs_match_as_fnmatch_reads_them(pattern: str, text: str, matched: bool) -> None:
    assert Glob.parse(pattern).match(text) is matched
    assert fnmatch.fnmatchcase(text, pattern) is matched


def test_random_patterns_agree_with_fnmatch() -> None:
    # Empty ranges (`[c-a]`) are left out: where one is followed by `!`, fnmatch reads the
    # `!` as a negation of the whole class; here it stays a member.
    pieces = ["a", "b", "c", "*", "?", "[", "]", "!", "a-c"]
    chance = random.Random(25)
    for _ in range(5000):
        pattern = "".join(chance.choices(pieces, k=chance.randint(0, 8)))
        text = "".join(chance.choices("abc-]![", k=chance.randint(0, 9)))
        assert Glob.parse(pattern).match(text) == fnmatch.fnmatchcase(text, pattern), (
            pattern,
            text,
        )


def test_wildcards_are_counted_once_per_run_of_stars() -> None:
    assert Glob.parse("*a**b?[cd]").wildcards == 4
    assert Glob.parse("plain").wildcards == 0
    assert Glob.parse("[unclosed").wildcards == 0


class Counted:
    """A segment that counts how often it is sought."""

    def __init__(self, pattern: re.Pattern[str], calls: list[str]) -> None:
        self.pattern = pattern
        self.calls = calls

    def __getattr__(self, name: str) -> object:
        self.calls.append(name)
        return getattr(self.pattern, name)


def test_each_segment_is_sought_at_most_once() -> None:
    # The pattern that makes a backtracking matcher try every split of the text.
    glob = Glob.parse("*a" * 50 + "*b")
    calls: list[str] = []
    counted = Glob(
        segments=tuple(Counted(s, calls) for s in glob.segments),  # type: ignore[misc]
        lengths=glob.lengths,
        starred=glob.starred,
        wildcards=glob.wildcards,
    )
    assert counted.match("a" * 200) is False
    assert len(calls) <= len(glob.segments)
    calls.clear()
    assert counted.match("a" * 200 + "b") is True
    assert len(calls) <= len(glob.segments)
