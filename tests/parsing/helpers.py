"""What the family parser tests share: feeding a parser, reading what it gave, and the pieces
of generated outputs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from hypothesis import strategies as st

from farmhand.messages import StreamEvent, TextDelta, ToolCall, ToolCallDelta, ToolCallEvent
from farmhand.parsing.base import FamilyParser, ParsedMessage, ParserOptions

# Feeding a parser.


def events_of(
    family: type[FamilyParser],
    text: str,
    *,
    pieces: list[str] | None = None,
    step: int = 0,
    known: set[str] | None = None,
    finish: bool = True,
    **options: Any,
) -> list[StreamEvent]:
    """What a new parser gives for `text`, fed as `pieces` if given, else `step` characters
    at a time (0: all at once); with `finish` False, what it gave before the end."""
    parser = family(known, options=ParserOptions(**options))
    if pieces is None:
        size = step or max(1, len(text))
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
    events: list[StreamEvent] = []
    for piece in pieces:
        events += parser.feed(piece)
    return events + parser.finish() if finish else events


def message_of(
    family: type[FamilyParser],
    text: str,
    pieces: list[str] | None = None,
    *,
    finish: bool = True,
    **options: Any,
) -> dict[str, Any]:
    """The parsed message as `farmhand parse` prints it (unfinished: partially, with the
    calls still being written)."""
    events = events_of(family, text, pieces=pieces, finish=finish, **options)
    return ParsedMessage.from_events(events, partial=not finish).to_json()


def split_at(text: str, cuts: list[int]) -> list[str]:
    """`text` cut at each of `cuts` (taken modulo its length + 1)."""
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)], strict=True)]


def splits(text: str, every: int = 1) -> Iterator[list[str]]:
    """`text` a character at a time, then cut in two at every `every`-th place."""
    yield list(text)
    for i in range(0, len(text) + 1, every):
        yield [text[:i], text[i:]]


# Reading what a parser gave.


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def calls_of(events: list[StreamEvent]) -> list[ToolCall]:
    return [e.call for e in events if isinstance(e, ToolCallEvent)]


def deltas_of(events: list[StreamEvent]) -> list[ToolCallDelta]:
    return [e for e in events if isinstance(e, ToolCallDelta)]


def arguments_text(events: list[StreamEvent]) -> str:
    """The arguments streamed while calls were written."""
    return "".join(d.arguments for d in deltas_of(events))


def view(events: list[StreamEvent]) -> dict[str, Any]:
    """The message the events make: what two ways of feeding a parser must agree on."""
    message = ParsedMessage.from_events(events)
    return {
        "content": message.content,
        "reasoning": message.reasoning_content,
        "calls": [(c.name, c.arguments, c.id, c.parse_error) for c in message.tool_calls],
    }


def check_arguments_are_json(events: list[StreamEvent]) -> None:
    """Raises unless every call's arguments are JSON data."""
    for call in ParsedMessage.from_events(events).tool_calls:
        json.dumps(call.arguments)


# Generated outputs.


def call_json(
    name: str, arguments: Any, call_id: str | None = None, *, key: str = "arguments"
) -> str:
    """A call object as JSON text: `{"name": ..., "arguments": ..., "id": ...}`."""
    return json.dumps({"name": name, key: arguments, **({"id": call_id} if call_id else {})})


def prose(exclude: str, max_size: int = 15) -> st.SearchStrategy[str]:
    """Text without the characters that start a family's markup."""
    return st.text(st.characters(codec="utf-8", exclude_characters=exclude), max_size=max_size)


names = st.sampled_from(["f", "get_weather"])
arguments = st.dictionaries(
    st.text(max_size=4), st.none() | st.integers() | st.text(max_size=6), max_size=3
)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner),
    max_leaves=5,
)


def markup_soup(markup: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    """Pieces of a family's markup and any text, run together."""
    return st.lists(markup | st.text(max_size=8), max_size=12).map("".join)


@st.composite
def damaged(
    draw: st.DrawFn,
    outputs: st.SearchStrategy[tuple[str, Any]],
    markup: st.SearchStrategy[str],
) -> str:
    """A well-formed output (from `outputs`, as `(text, meaning)`) with pieces of markup or
    any text put in anywhere, then cut off anywhere."""
    text = draw(outputs)[0]
    noise = st.tuples(st.integers(0, 10_000), markup | st.text(max_size=4))
    for at, piece in draw(st.lists(noise, max_size=4)):
        at %= len(text) + 1
        text = text[:at] + piece + text[at:]
    return text[: draw(st.integers(0, 10_000)) % (len(text) + 1)]
