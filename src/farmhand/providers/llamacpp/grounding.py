"""Whether a tool call's argument values come from the conversation or from nowhere.

Small models invent values: asked for two calls they write five, each with a value the user
never mentioned (`d_time` 15, 20, 25 after the question's 4 and 10), and asked something no
tool fits they call one anyway with values they made up. A value is *grounded* when the user
wrote it (or a tool result did); the provider uses these checks to drop invented calls and
invented optional arguments (`providers/llamacpp/turn_calls.py`).

What a value counts as (each leaf of an argument: list items and object fields one by one):

- a string is grounded when the text holds it (case-insensitive, whitespace collapsed), or
  holds more than half of its words ("Los Angeles, CA" against "Los Angeles");
- a number is grounded when it equals a number written in the text, sign ignored ("b = -11"
  is often written "- 11x"): digits with an optional decimal part and exponent (1e-9),
  thousands written with commas ("$2,000,000"), a percentage also as its fraction (5% is
  0.05 too), a number followed by thousand/million/billion also multiplied, and the words
  zero to twelve;
- neutral, neither grounded nor not: booleans and nulls, the schema's default, an enum
  member the text does not hold, an empty string, and a code of two to four capitals the
  text does not hold (USD for "US dollars", CA for California: derived, not invented).
  They are choices, not facts the user must have stated, so they cannot make a call
  ungrounded; nor can they ground one.

Only the first 100,000 characters of the conversation are read (enough for any question a
small model's context holds).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from farmhand.messages import Message, ToolCall

Status = Literal["grounded", "ungrounded", "neutral"]
LIMIT = 100_000
_WORD = re.compile(r"[^\W_]+")
_NUMBER = re.compile(r"(?:\d*\.\d+|\d+)(?:e[-+]?\d+)?")  # casefolded: 1e-9 too
# "300,000" and "1,250.5"; not the "5,10" of a list, which _NUMBER reads as 5 and 10.
_GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?!\d|,\d)")
# USD, JPY, CA, IL: a code the model derives from a name the user wrote ("US dollars").
_CODE = re.compile(r"[A-Z]{2,4}")
_SCALED = re.compile(r"(\d*\.\d+|\d+)\s*(%|percent\b|thousand\b|million\b|billion\b)")
_SCALES = {"%": 0.01, "percent": 0.01, "thousand": 1e3, "million": 1e6, "billion": 1e9}
_NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve",
)  # fmt: skip


@dataclass(frozen=True)
class Evidence:
    """What the user (and the tools) wrote, ready for the checks: the text casefolded with
    its whitespace collapsed, its words and the numbers written in it."""

    text: str
    words: frozenset[str]
    numbers: frozenset[float]

    @classmethod
    def of(cls, texts: Iterable[str]) -> Evidence:
        text = " ".join(" ".join(texts)[:LIMIT].casefold().split())
        words = frozenset(_WORD.findall(text))
        return cls(text, words, frozenset(_numbers_in(text, words)))

    def holds_text(self, value: str) -> bool:
        wanted = " ".join(value.casefold().split())
        if wanted in self.text:
            return True
        words = _WORD.findall(wanted)
        return bool(words) and 2 * sum(w in self.words for w in words) > len(words)

    def holds_number(self, value: float) -> bool:
        size = abs(value)
        return any(math.isclose(size, n, rel_tol=1e-9, abs_tol=1e-12) for n in self.numbers)


def evidence_of(messages: Sequence[Message]) -> Evidence:
    """The grounds of a turn: what the user wrote and what tools returned (a call may use a
    value a result listed), not what the system prompt or the model itself said."""
    return Evidence.of(m.content for m in messages if m.role in ("user", "tool"))


def status(value: Any, schema: Mapping[str, Any], evidence: Evidence) -> Status:
    """One value's standing: grounded only when every leaf is grounded or neutral and one is
    grounded; ungrounded when a leaf is; else neutral."""
    found = set(leaf_statuses(value, schema, evidence))
    if "ungrounded" in found:
        return "ungrounded"
    return "grounded" if "grounded" in found else "neutral"


def leaf_statuses(value: Any, schema: Mapping[str, Any], evidence: Evidence) -> Iterator[Status]:
    """The status of each leaf of `value` (list items and object fields one by one)."""
    if "default" in schema and value == schema["default"]:
        yield "neutral"
    elif isinstance(value, Mapping):
        fields = _mapping(schema.get("properties"))
        for key, item in value.items():
            yield from leaf_statuses(item, _mapping(fields.get(key)), evidence)
    elif isinstance(value, list):
        items = _mapping(schema.get("items"))
        for item in value:
            yield from leaf_statuses(item, items, evidence)
    else:
        yield _leaf(value, schema, evidence)


def further_call_grounded(
    call: ToolCall,
    earlier: Sequence[ToolCall],
    schemas: Mapping[str, Mapping[str, Any]],
    evidence: Evidence,
) -> bool:
    """Whether a call after the turn's first is one the user asked for. Against each
    earlier call of the same tool, the values it changes must include one the text holds: a
    call that only varies a value the user never wrote, or only flips a flag, an enum or a
    default (Cairo in fahrenheit after Cairo in celsius), is the model sweeping on by
    itself. A call of another tool must not rest on invented values alone: one grounded
    value, or none to judge."""
    fields = _mapping(_mapping(schemas.get(call.name)).get("properties"))
    same = [c for c in earlier if c.name == call.name]
    if not same:
        found = [status(v, _mapping(fields.get(k)), evidence) for k, v in call.arguments.items()]
        return "grounded" in found or "ungrounded" not in found
    return all(
        any(
            s == "grounded"
            for key in _changed(call, other)
            if key in call.arguments
            for s in leaf_statuses(call.arguments[key], _mapping(fields.get(key)), evidence)
        )
        for other in same
    )


def grounded_share(
    call: ToolCall, schemas: Mapping[str, Mapping[str, Any]], evidence: Evidence
) -> float | None:
    """The share of the call's required values (leaves that are not neutral) the text
    holds; None when there is none to judge."""
    schema = _mapping(schemas.get(call.name))
    fields = _mapping(schema.get("properties"))
    required = schema.get("required")
    names = [k for k in required if isinstance(k, str)] if isinstance(required, list) else []
    found = [
        s
        for key in names
        if key in call.arguments
        for s in leaf_statuses(call.arguments[key], _mapping(fields.get(key)), evidence)
        if s != "neutral"
    ]
    if not found:
        return None
    return found.count("grounded") / len(found)


def ungrounded_optional(
    call: ToolCall, schemas: Mapping[str, Mapping[str, Any]], evidence: Evidence
) -> list[str]:
    """The optional arguments of the call whose values nobody wrote: left out, the tool
    uses its own default instead of one the model made up (`category: "Drama"` for a
    question about an actor's films, `mission: "Mission 1"`)."""
    schema = _mapping(schemas.get(call.name))
    fields = _mapping(schema.get("properties"))
    required = schema.get("required")
    needed = set(required) if isinstance(required, list) else set()
    return [
        key
        for key, value in call.arguments.items()
        if key not in needed and status(value, _mapping(fields.get(key)), evidence) == "ungrounded"
    ]


def _leaf(value: Any, schema: Mapping[str, Any], evidence: Evidence) -> Status:
    if value is None or isinstance(value, bool):
        return "neutral"
    if isinstance(value, str):
        if not value.strip():
            return "neutral"
        written = evidence.holds_text(value)
    elif isinstance(value, int | float) and math.isfinite(value):
        written = evidence.holds_number(float(value))
    else:
        return "neutral"
    if written:
        return "grounded"
    if isinstance(value, str) and _CODE.fullmatch(value.strip()):
        return "neutral"
    enum = schema.get("enum")
    return "neutral" if isinstance(enum, list) and value in enum else "ungrounded"


def _changed(call: ToolCall, other: ToolCall) -> list[str]:
    keys = dict.fromkeys([*call.arguments, *other.arguments])
    return [k for k in keys if call.arguments.get(k) != other.arguments.get(k)]


def _numbers_in(text: str, words: frozenset[str]) -> Iterator[float]:
    for match in _NUMBER.finditer(text):
        yield float(match.group())
    for match in _GROUPED.finditer(text):
        yield float(match.group().replace(",", ""))
    for match in _SCALED.finditer(text):
        yield float(match.group(1)) * _SCALES[match.group(2)]
    for value, word in enumerate(_NUMBER_WORDS):
        if word in words:
            yield float(value)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}
