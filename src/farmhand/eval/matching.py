"""Does a model's call match an expected one? Value comparison as BFCL's AST checker does it:
strings ignore case, whitespace and `,./-_*^`; numbers compare numerically; lists and
objects compare item by item. Parallel calls match in any order.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from typing import Any

from farmhand.eval.suite import ExpectedCall
from farmhand.messages import ToolCall
from farmhand.tools.preview import preview

_IGNORED = re.compile(r"[\s,./\-_*^]")
# Beyond this many calls in one turn, pairs are matched greedily instead of by permutation.
_EXHAUSTIVE_LIMIT = 6


def values_equal(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return type(expected) is type(actual) and expected == actual
    if isinstance(expected, (int, float)) and isinstance(actual, (int, float)):
        return float(expected) == float(actual)
    if isinstance(expected, str) and isinstance(actual, str):
        return _standard(expected) == _standard(actual)
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(
            values_equal(e, a) for e, a in zip(expected, actual, strict=True)
        )
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(
            values_equal(expected[k], actual[k]) for k in expected
        )
    return bool(expected == actual)


def _standard(text: str) -> str:
    return _IGNORED.sub("", text.casefold()).replace("'", '"')


def call_mismatch(expected: ExpectedCall, call: ToolCall) -> str | None:
    """None when `call` is acceptable for `expected`; otherwise what differs."""
    if call.name != expected.name:
        return f"called {call.name}, expected {expected.name}"
    if call.parse_error:
        return f"{call.name}: unreadable call ({call.parse_error})"
    for key, acceptable in expected.arguments.items():
        if key not in call.arguments:
            if None not in acceptable:
                return f"{call.name}: missing argument {key!r}"
            continue
        value = call.arguments[key]
        if not any(values_equal(a, value) for a in acceptable if a is not None):
            shown = ", ".join(preview(a, 40) for a in acceptable if a is not None)
            return f"{call.name}: {key}={preview(value, 40)}, expected one of {shown}"
    extra = [key for key in call.arguments if key not in expected.arguments]
    if extra and not expected.allow_extra:
        return f"{call.name}: unexpected argument(s) {', '.join(map(repr, extra))}"
    return None


def match_calls(expected: Sequence[ExpectedCall], calls: Sequence[ToolCall]) -> str | None:
    """None when the calls are exactly the expected ones, in any order; else the reason."""
    if len(calls) != len(expected):
        made = ", ".join(c.name for c in calls) or "none"
        return f"made {len(calls)} call(s) ({made}), expected {len(expected)}"
    if len(calls) <= _EXHAUSTIVE_LIMIT:
        best: list[str] | None = None  # the pairing with the fewest problems explains best
        for order in itertools.permutations(calls):
            pairs = zip(expected, order, strict=True)
            problems = [p for p in (call_mismatch(e, c) for e, c in pairs) if p is not None]
            if not problems:
                return None
            if best is None or len(problems) < len(best):
                best = problems
        return best[0] if best else None
    return _greedy(expected, calls)


def _greedy(expected: Sequence[ExpectedCall], calls: Sequence[ToolCall]) -> str | None:
    left = list(calls)
    for want in expected:
        found = next((c for c in left if call_mismatch(want, c) is None), None)
        if found is None:
            same_name = next((c for c in left if c.name == want.name), None)
            return call_mismatch(want, same_name) if same_name else f"no call of {want.name}"
        left.remove(found)
    return None


def mentions_any(text: str, needles: Sequence[str]) -> bool:
    folded = text.casefold()
    return any(n.casefold() in folded for n in needles)
