"""Scoring one turn against one case: every pass and failure reason, value matching as BFCL
does it, parallel calls in any order, and the schema-valid share."""

from __future__ import annotations

import pytest

from farmhand.eval.matching import match_calls, values_equal
from farmhand.eval.scoring import TargetSummary, TurnOutput, score
from farmhand.eval.suite import EvalCase, ExpectedCall
from farmhand.messages import Message, ToolCall, Usage
from farmhand.tools.definition import ToolDefinition

WEATHER = ToolDefinition(
    "get_weather",
    "Weather for a city.",
    {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
        "required": ["city"],
    },
)
PARIS = ExpectedCall("get_weather", {"city": ("Paris", "Paris, France"), "days": (None, 1)})
ROME = ExpectedCall("get_weather", {"city": ("Rome",)})


def case(*expected: ExpectedCall, answer: tuple[str, ...] = (), category: str = "c") -> EvalCase:
    return EvalCase(
        "id", category, (Message.user("q"),), (WEATHER,), tuple(expected), answer_contains=answer
    )


def calls(*pairs: tuple[str, dict[str, object]]) -> TurnOutput:
    return TurnOutput(calls=tuple(ToolCall(name, dict(args)) for name, args in pairs))


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("Paris", "  paris "),
        ("New York", "new-york"),
        ("a.b_c", "ABC"),
        (2, 2.0),
        (1.5, 1.5),
        ([1, "X"], [1.0, "x"]),
        ({"a": "B"}, {"a": "b"}),
        (True, True),
    ],
)
def test_equal_values(expected: object, actual: object) -> None:
    assert values_equal(expected, actual)


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ("Paris", "Pariss"),
        (2, 3),
        (True, 1),
        (1, True),
        ([1, 2], [2, 1]),
        ({"a": 1}, {"b": 1}),
        ("2", 2),
        (None, "x"),
    ],
)
def test_different_values(expected: object, actual: object) -> None:
    assert not values_equal(expected, actual)


def test_right_call_with_an_acceptable_value_passes() -> None:
    result = score(case(PARIS), calls(("get_weather", {"city": "paris, france"})))
    assert (result.passed, result.reason, result.valid_calls) == (True, "ok", 1)


def test_optional_argument_may_be_given_if_acceptable() -> None:
    assert score(case(PARIS), calls(("get_weather", {"city": "Paris", "days": 1}))).passed
    result = score(case(PARIS), calls(("get_weather", {"city": "Paris", "days": 3})))
    assert result.reason == "wrong_calls"
    assert "days=3" in result.detail


@pytest.mark.parametrize(
    ("output", "reason", "detail"),
    [
        (TurnOutput(text="It is sunny."), "no_call", "without calling"),
        (calls(("get_weather", {"city": "Lyon"})), "wrong_calls", 'city="Lyon"'),
        (calls(("get_weather", {})), "wrong_calls", "missing argument 'city'"),
        (calls(("get_weather", {"city": "Paris", "hl": "en"})), "wrong_calls", "'hl'"),
        (calls(("get_time", {"city": "Paris"})), "wrong_calls", "called get_time"),
        (
            calls(("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Paris"})),
            "wrong_count",
            "made 2 call(s)",
        ),
        (TurnOutput(error="backend down"), "error", "backend down"),
    ],
)
def test_failures_say_why(output: TurnOutput, reason: str, detail: str) -> None:
    result = score(case(PARIS), output)
    assert not result.passed
    assert result.reason == reason
    assert detail in result.detail


def test_unreadable_call_fails_and_is_not_schema_valid() -> None:
    broken = ToolCall("get_weather", {}, parse_error="bad JSON")
    result = score(case(PARIS), TurnOutput(calls=(broken,)))
    assert result.reason == "wrong_calls"
    assert "unreadable" in result.detail
    assert result.valid_calls == 0


def test_parallel_calls_match_in_any_order() -> None:
    both = case(PARIS, ROME)
    swapped = calls(("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Paris"}))
    assert score(both, swapped).passed
    result = score(
        both, calls(("get_weather", {"city": "Rome"}), ("get_weather", {"city": "Pisa"}))
    )
    assert result.reason == "wrong_calls"
    assert "Pisa" in result.detail  # the best pairing explains the failure


def test_many_parallel_calls_are_matched_greedily() -> None:
    cities = [f"c{i}" for i in range(8)]
    expected = [ExpectedCall("get_weather", {"city": (c,)}) for c in cities]
    made = [ToolCall("get_weather", {"city": c}) for c in reversed(cities)]
    assert match_calls(expected, made) is None
    made[0] = ToolCall("get_weather", {"city": "elsewhere"})
    assert match_calls(expected, made) is not None


def test_no_call_cases() -> None:
    none = case()
    assert score(none, TurnOutput(text="A joke.")).passed
    result = score(none, calls(("get_weather", {"city": "Paris"})))
    assert (result.reason, result.detail) == ("unexpected_call", "get_weather")
    fact = case(answer=("-3", "minus three"))
    assert score(fact, TurnOutput(text="It is -3 °C in Oslo.")).passed
    missing = score(fact, TurnOutput(text="It is cold."))
    assert missing.reason == "missing_answer"


def test_schema_validity_is_counted_apart_from_passing() -> None:
    output = calls(
        ("get_weather", {"city": "Paris"}),  # valid, but the wrong count
        ("get_weather", {"city": 3}),  # wrong type
        ("nope", {}),  # not offered
    )
    result = score(case(PARIS), output)
    assert (result.passed, result.valid_calls) == (False, 1)


def test_judge_replaces_matching() -> None:
    judged = EvalCase(
        "j", "c", (Message.user("q"),), (WEATHER,), (PARIS,), judge=lambda made: "judged wrong"
    )
    result = score(judged, calls(("get_weather", {"city": "Paris"})))
    assert (result.reason, result.detail) == ("wrong_calls", "judged wrong")


def test_summary_per_category_schema_share_and_per_item_means() -> None:
    a = score(case(PARIS, category="a"), calls(("get_weather", {"city": "Paris"})))
    b = score(case(PARIS, category="a"), TurnOutput(text="no"))
    c = score(
        case(category="b"),
        TurnOutput(text="hi", usage=Usage(30, 3), seconds=2.0),
    )
    summary = TargetSummary("t", (a, b, c))
    assert {k: (v.passed, v.total) for k, v in summary.categories.items()} == {
        "a": (1, 2),
        "b": (1, 1),
    }
    assert summary.accuracy == pytest.approx(2 / 3)
    assert summary.mean_accuracy == pytest.approx((0.5 + 1.0) / 2)
    assert (summary.valid_calls, summary.calls, summary.schema_valid_share) == (1, 1, 1.0)
    assert summary.per_item() == {
        "prompt_tokens": 10.0,
        "completion_tokens": 1.0,
        "seconds": pytest.approx(2 / 3),
    }
    assert [r.reason for r in summary.failures()] == ["no_call"]
    assert TargetSummary("empty", ()).schema_valid_share is None
