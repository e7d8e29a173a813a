"""Values a question lists together, some used by the calls so far
(providers/llamacpp/siblings.py)."""

from __future__ import annotations

from typing import Any

import pytest

from farmhand.messages import ToolCall
from farmhand.providers.llamacpp.siblings import unused_siblings


def calls(*arguments: dict[str, Any]) -> list[ToolCall]:
    return [ToolCall("tool", a) for a in arguments]


@pytest.mark.parametrize(
    ("question", "written", "unused"),
    [
        ("Price of a Yamaha P125 in Berlin and Madrid's stores.", [{"city": "Berlin"}], ["Madrid"]),
        ("Top scorer in seasons 2017, 2018 and 2019?", [{"season": 2017}], ["2018", "2019"]),
        ("Seasons 2017, 2018 and 2019?", [{"season": 2017}, {"season": 2019}], ["2018"]),
        ("Concerts in Berlin and Paris", [{"q": {"where": ["near Berlin"]}}], ["Paris"]),
        ("Losses of -4 and 7", [{"x": 4}], ["7"]),  # the sign is often written apart
    ],
)
def test_a_list_some_of_which_the_calls_used_wants_more(
    question: str, written: list[dict[str, Any]], unused: list[str]
) -> None:
    assert unused_siblings(question, calls(*written)) == unused


@pytest.mark.parametrize(
    ("question", "written"),
    [
        ("Weather in Berlin and Paris", []),  # no call yet: the first is the model's to make
        ("Weather in Berlin and Paris", [{"city": "Berlin"}, {"city": "Paris"}]),  # all used
        ("Distance from Berlin and Paris", [{"a": "Berlin", "b": "Paris"}]),
        ("Rock and jazz concerts", [{"genre": "rock"}]),  # not names or numbers
        ("A length of 5 and Width 4", [{"length": 5}]),  # a number and a name: no list
        ("Weather in Berlin and Paris", [{"city": "Rome"}]),  # none used: not this list
        ("Is true and False", [{"flag": True}]),  # a flag is not the number 1 or a name
    ],
)
def test_no_more_wanted(question: str, written: list[dict[str, Any]]) -> None:
    assert unused_siblings(question, calls(*written)) == []
