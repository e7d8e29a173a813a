"""Grounding rules on their own: which values count as written by the user, which further
calls are the user's, how much of a first call rests on the question."""

from __future__ import annotations

from typing import Any

import pytest

from farmhand.messages import Message, ToolCall, ToolResult
from farmhand.providers.llamacpp.grounding import (
    Evidence,
    evidence_of,
    further_call_grounded,
    grounded_share,
    status,
    ungrounded_optional,
)

EM_FORCE = {
    "type": "object",
    "properties": {
        "b_field": {"type": "integer"},
        "area": {"type": "integer"},
        "d_time": {"type": "integer"},
    },
    "required": ["b_field", "area", "d_time"],
}
SHOWS = {
    "type": "object",
    "properties": {
        "service": {"type": "string"},
        "shows": {"type": "array", "items": {"type": "string"}},
        "sort": {"type": "boolean"},
        "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
        "year": {"type": "integer", "default": 2000},
    },
    "required": ["service", "shows"],
}


def ev(text: str) -> Evidence:
    return Evidence.of([text])


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("new york city, NY", "Fetch New York City, NY,  and Los Angeles"),
        ("Los Angeles, CA", "the population of Los Angeles"),  # two of its three words are there
        (30.45, "a purchase of $30.45 in Chicago"),
        (-11, "solve 3x^2 - 11x - 4"),  # the sign is often written apart
        (300000, "within $300,000 to $400,000"),
        (5, "the factorial of 5,10 and 15"),
        (0.05, "a tax rate of 5%"),
        (2_000_000, "an income of 2 million"),
        (3, "three bedrooms"),
        (1.888334, "coordinates 46.603354,1.8883340"),
        (2e-9, "charges of 1e-9 and 2e-9"),
        (2_000_000, "a net income of $2,000,000, and dividends"),
    ],
)
def test_values_the_user_wrote_are_grounded(value: Any, text: str) -> None:
    assert status(value, {}, ev(text)) == "grounded"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (15, "change in time of 4 seconds, then 10 seconds"),
        ("country", "the population of Alaska and USA"),
        (510, "the factorial of 5,10 and 15"),
        ([0, 0], "roots of 3x^2 - 2x - 5"),
    ],
)
def test_values_from_nowhere_are_ungrounded(value: Any, text: str) -> None:
    assert status(value, {}, ev(text)) == "ungrounded"


def test_flags_defaults_and_unwritten_enum_members_are_neutral() -> None:
    fields = SHOWS["properties"]
    text = ev("Find Friends on Netflix")
    assert status(False, fields["sort"], text) == "neutral"
    assert status(2000, fields["year"], text) == "neutral"
    assert status("celsius", fields["unit"], text) == "neutral"
    assert status("", {}, text) == "neutral"
    assert status(None, {}, text) == "neutral"
    assert status("USD", {}, ev("250 US dollars")) == "neutral"  # a code derived from a name
    assert status("Usd", {}, ev("250 US dollars")) == "ungrounded"
    # An enum member the user did write grounds like any string.
    assert status("fahrenheit", fields["unit"], ev("in fahrenheit please")) == "grounded"
    # A list is ungrounded as soon as one of its items is.
    assert status(["Friends", "Lost"], fields["shows"], text) == "ungrounded"


def test_the_grounds_are_user_text_and_tool_results_not_the_system_or_the_model() -> None:
    messages = [
        Message.system("Tools may use Berlin."),
        Message.user("List the files."),
        Message.assistant("I will guess notes.txt"),
        Message.tool(ToolResult("c1", "list", "a.txt b.txt")),
    ]
    evidence = evidence_of(messages)
    assert status("b.txt", {}, evidence) == "grounded"
    assert status("Berlin", {}, evidence) == "ungrounded"
    assert status("notes.txt", {}, evidence) == "ungrounded"


QUESTION = ev(
    "Calculate the induced electromagnetic force for a magnetic field of 5 Tesla, area of 2"
    " square meters and change in time of 4 seconds, then repeat with a change in time of 10."
)


def em(d_time: int) -> ToolCall:
    return ToolCall("em", {"b_field": 5, "area": 2, "d_time": d_time})


def test_a_further_call_varying_a_value_the_user_wrote_is_kept() -> None:
    assert further_call_grounded(em(10), [em(4)], {"em": EM_FORCE}, QUESTION)


def test_a_further_call_sweeping_on_to_values_nobody_wrote_is_not() -> None:
    assert not further_call_grounded(em(15), [em(4), em(10)], {"em": EM_FORCE}, QUESTION)


def test_a_further_call_that_only_flips_a_flag_is_not_kept() -> None:
    first = ToolCall("shows", {"service": "Netflix", "shows": ["Friends"], "sort": True})
    flipped = ToolCall("shows", {"service": "Netflix", "shows": ["Friends"], "sort": False})
    evidence = ev("Friends on Netflix, and Hulu, sorted by rating")
    assert not further_call_grounded(flipped, [first], {"shows": SHOWS}, evidence)
    hulu = ToolCall("shows", {"service": "Hulu", "shows": ["Friends"], "sort": True})
    assert further_call_grounded(hulu, [first], {"shows": SHOWS}, evidence)
    # Against every earlier call: Hulu unsorted differs from Hulu sorted by a flag only.
    hulu_flipped = ToolCall("shows", {"service": "Hulu", "shows": ["Friends"], "sort": False})
    assert not further_call_grounded(hulu_flipped, [first, hulu], {"shows": SHOWS}, evidence)


def test_a_further_call_of_another_tool_needs_one_grounded_value_or_none_to_judge() -> None:
    earlier = [em(4)]
    schemas: dict[str, Any] = {"em": EM_FORCE}
    assert further_call_grounded(ToolCall("now", {}), earlier, schemas, QUESTION)
    assert further_call_grounded(ToolCall("log", {"x": 10, "y": 99}), earlier, schemas, QUESTION)
    assert not further_call_grounded(ToolCall("log", {"x": 99}), earlier, schemas, QUESTION)


def test_the_first_call_share_counts_required_values_only() -> None:
    schemas = {"shows": SHOWS}
    evidence = ev("Friends on Netflix")
    full = ToolCall("shows", {"service": "Netflix", "shows": ["Friends", "Lost"], "unit": "x"})
    assert grounded_share(full, schemas, evidence) == pytest.approx(2 / 3)
    made_up = ToolCall("shows", {"service": "Hulu", "shows": ["Lost"]})
    assert grounded_share(made_up, schemas, evidence) == 0
    # Nothing required to judge (or only neutral values): no share.
    assert grounded_share(ToolCall("shows", {"sort": True}), schemas, evidence) is None
    assert grounded_share(ToolCall("unknown", {"a": 1}), schemas, evidence) is None


def test_optional_values_nobody_wrote_are_the_ones_left_out() -> None:
    schemas = {"shows": {**SHOWS, "properties": {**SHOWS["properties"], "genre": {}}}}
    evidence = ev("Friends and Lost on Netflix, comedies only")
    call = ToolCall(
        "shows",
        {
            "service": "Hulu",  # required: never left out, however invented
            "shows": ["Friends"],
            "genre": "Drama",  # optional and invented: out
            "sort": True,  # a flag, the default and an enum member are choices: kept
            "year": 2000,
            "unit": "celsius",
        },
    )
    assert ungrounded_optional(call, schemas, evidence) == ["genre"]
    written = ToolCall("shows", {"service": "Netflix", "shows": [], "genre": "comedies"})
    assert ungrounded_optional(written, schemas, evidence) == []
    # A list with one invented item is invented; without a schema all is optional.
    mixed = ToolCall("shows", {"service": "x", "shows": [], "genre": ["Lost", "Heroes"]})
    assert ungrounded_optional(mixed, schemas, evidence) == ["genre"]
    assert ungrounded_optional(ToolCall("other", {"a": 7}), schemas, evidence) == ["a"]


def test_garbage_arguments_and_schemas_do_not_raise() -> None:
    odd = ToolCall("x", {"a": float("nan"), "b": {"c": [1, {"d": "e"}]}, "f": object()})
    schemas: dict[str, Any] = {"x": {"properties": "not a mapping", "required": "a"}}
    assert grounded_share(odd, schemas, ev("1 e")) is None
    assert further_call_grounded(odd, [ToolCall("x", {})], schemas, ev("1 e"))
    assert ungrounded_optional(odd, schemas, ev("1 e")) == []
