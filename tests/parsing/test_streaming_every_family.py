"""Every family in the registry streams its calls (issue 28): fed one character at a time, a
well-formed output of the family (tests/parsing/well_formed.py) gives what it gives whole,
each call's name is announced and its arguments start to arrive before the call is written
to its end, and the argument deltas add up to the call's arguments. The families come from
the registry, so one added there without an output here fails the first test."""

from __future__ import annotations

import json

import pytest
from tests.parsing.helpers import view
from tests.parsing.well_formed import WELL_FORMED

from farmhand.messages import StreamEvent, ToolCallDelta, ToolCallEvent
from farmhand.parsing.base import ParserOptions
from farmhand.parsing.registry import FAMILIES, parser_for


def test_every_registered_family_has_a_well_formed_output() -> None:
    assert sorted(set(FAMILIES) - set(WELL_FORMED)) == []
    assert sorted(set(WELL_FORMED) - set(FAMILIES)) == []


def fed(family: str, pieces: list[str]) -> list[tuple[int, StreamEvent]]:
    """The events, each with how many characters had been fed when it came."""
    parser = parser_for(None, None, None, family=family, options=ParserOptions())
    events: list[tuple[int, StreamEvent]] = []
    seen = 0
    for piece in pieces:
        seen += len(piece)
        events += [(seen, e) for e in parser.feed(piece)]
    return events + [(seen + 1, e) for e in parser.finish()]


@pytest.mark.parametrize("family", FAMILIES)
def test_one_character_at_a_time_parses_like_the_whole(family: str) -> None:
    text = WELL_FORMED[family]
    by_char = view([e for _, e in fed(family, list(text))])
    assert by_char == view([e for _, e in fed(family, [text])])
    assert by_char["calls"], "the output must hold a call"


@pytest.mark.parametrize("family", FAMILIES)
def test_calls_stream_as_argument_deltas(family: str) -> None:
    events = fed(family, list(WELL_FORMED[family]))
    ended = {}  # call index -> when its ToolCallEvent came
    named = {}  # call index -> when its name was announced
    first_argument = {}  # call index -> when its first argument piece came
    streamed: dict[int, str] = {}
    calls = []
    for at, event in events:
        if isinstance(event, ToolCallDelta):
            if event.name:
                named.setdefault(event.index, at)
            if event.arguments:
                first_argument.setdefault(event.index, at)
                streamed[event.index] = streamed.get(event.index, "") + event.arguments
        elif isinstance(event, ToolCallEvent):
            ended[len(calls)] = at
            calls.append(event.call)
    assert calls
    for index, call in enumerate(calls):
        assert call.parse_error is None, call
        assert json.loads(streamed[index]) == call.arguments
        assert named[index] <= first_argument[index]
        if call.arguments:
            # The arguments began to stream while the call was still being written.
            assert first_argument[index] < ended[index], (index, call)
