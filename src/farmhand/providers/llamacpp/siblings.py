"""Values a question lists together, of which the calls so far used only some.

"Price and stock of a Yamaha P125 in Berlin and Madrid" wants two calls; a small model writes
the one for Berlin and ends its turn. A list in the question ("Berlin and Madrid", "2017,
2018 and 2019") whose members are all numbers or all capitalised words, some of them in the
turn's calls and some not, says another call is wanted: the call gate then pushes the model
into writing one (`call_gate.TurnGate.call_written`), and grounding still drops it if it
brings nothing the user wrote (`turn_calls.py`).

Only single-word members are read, and only lists of one kind: "rock and jazz" or "length
5 and width 4" (a word and a number) are not lists of values a call takes one at a time.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from farmhand.messages import ToolCall

_MEMBER = r"[\w$.%'-]+"
_LIST = re.compile(rf"({_MEMBER}(?:\s*,\s*{_MEMBER})*)\s*,?\s+and\s+({_MEMBER})")
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_NAME = re.compile(r"[A-Z][a-zA-Z]+")


def unused_siblings(question: str, calls: Sequence[ToolCall]) -> list[str]:
    """The members of the question's lists that no call used, for lists some member of
    which a call did use; empty when no more calls are wanted (or nothing is known)."""
    if not calls:
        return []
    unused: list[str] = []
    for members in _lists(question[:10_000]):
        used = [_used(m, calls) for m in members]
        if any(used):
            unused += [m for m, u in zip(members, used, strict=True) if not u]
    return unused


def _lists(question: str) -> Iterator[list[str]]:
    for match in _LIST.finditer(question):
        members = [*match.group(1).split(","), match.group(2)]
        members = [re.sub(r"'s$", "", m.strip().strip(".$")) for m in members]
        members = [m for m in members if m]
        numbers = all(_NUMBER.fullmatch(m) for m in members)
        names = all(_NAME.fullmatch(m) for m in members)
        if len(members) >= 2 and (numbers or names):
            yield members


def _used(member: str, calls: Sequence[ToolCall]) -> bool:
    wanted = member.casefold()
    word = re.compile(rf"\b{re.escape(wanted)}\b")
    number = float(wanted) if _NUMBER.fullmatch(wanted) else None
    for call in calls:
        for leaf in _leaves(call.arguments):
            if isinstance(leaf, str) and word.search(leaf.casefold()):
                return True
            if number is not None and _number(leaf) == abs(number):
                return True
    return False


def _number(leaf: Any) -> float | None:
    if isinstance(leaf, bool) or not isinstance(leaf, int | float):
        return None
    return abs(float(leaf))


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list):
        for item in value:
            yield from _leaves(item)
    else:
        yield value
