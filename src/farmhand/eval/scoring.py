"""Scoring: one model turn against one case, and a target's results summed up.

An item passes when the turn made exactly the expected calls (any order, acceptable values),
or, when no call was expected, made none (and mentioned what `answer_contains` asks for).
Independently of passing, every call is checked against its tool's JSON Schema: the share of
schema-valid calls says whether a model's failures are wrong choices or broken calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from farmhand.eval.matching import match_calls, mentions_any
from farmhand.eval.suite import EvalCase
from farmhand.messages import ToolCall, Usage
from farmhand.tools.schema import validate_arguments

Reason = Literal[
    "ok", "no_call", "wrong_count", "wrong_calls", "unexpected_call", "missing_answer", "error"
]


@dataclass(frozen=True)
class TurnOutput:
    """What the model did with one case."""

    text: str = ""
    calls: tuple[ToolCall, ...] = ()
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0
    error: str | None = None  # the turn failed (provider error); the item fails


@dataclass(frozen=True)
class ItemResult:
    case_id: str
    category: str
    passed: bool
    reason: Reason
    detail: str
    output: TurnOutput
    valid_calls: int  # calls that name an offered tool with schema-valid arguments


def score(case: EvalCase, output: TurnOutput) -> ItemResult:
    valid = sum(1 for call in output.calls if schema_problem(case, call) is None)

    def result(reason: Reason, detail: str = "") -> ItemResult:
        passed = reason == "ok"
        return ItemResult(case.id, case.category, passed, reason, detail, output, valid)

    if output.error is not None:
        return result("error", output.error)
    calls = output.calls
    if not case.expects_call:
        if calls:
            return result("unexpected_call", ", ".join(c.name for c in calls))
        if case.answer_contains and not mentions_any(output.text, case.answer_contains):
            wanted = " or ".join(map(repr, case.answer_contains))
            return result("missing_answer", f"the answer does not mention {wanted}")
        return result("ok")
    if not calls:
        return result("no_call", "answered without calling")
    problem = case.judge(calls) if case.judge else match_calls(case.expected, calls)
    if problem is None:
        return result("ok")
    return result("wrong_count" if len(calls) != len(case.expected) else "wrong_calls", problem)


def schema_problem(case: EvalCase, call: ToolCall) -> str | None:
    """Why `call` is not a valid call of an offered tool, or None."""
    tool = next((t for t in case.tools if t.name == call.name), None)
    if tool is None:
        return f"{call.name} is not an offered tool"
    if call.parse_error:
        return call.parse_error
    return validate_arguments(tool, call.arguments)


@dataclass(frozen=True)
class CategoryScore:
    passed: int
    total: int

    @property
    def accuracy(self) -> float:
        return self.passed / self.total if self.total else 0.0


@dataclass(frozen=True)
class TargetSummary:
    """A target's results over a suite."""

    target: str
    results: tuple[ItemResult, ...]
    description: str = ""

    @property
    def categories(self) -> dict[str, CategoryScore]:
        names = dict.fromkeys(r.category for r in self.results)
        return {
            name: CategoryScore(
                sum(1 for r in self.results if r.category == name and r.passed),
                sum(1 for r in self.results if r.category == name),
            )
            for name in names
        }

    @property
    def accuracy(self) -> float:
        """Items passed over items run."""
        return _share(sum(r.passed for r in self.results), len(self.results))

    @property
    def mean_accuracy(self) -> float:
        """The mean of the categories' accuracies (each category weighs the same)."""
        scores = list(self.categories.values())
        return sum(s.accuracy for s in scores) / len(scores) if scores else 0.0

    @property
    def calls(self) -> int:
        return sum(len(r.output.calls) for r in self.results)

    @property
    def valid_calls(self) -> int:
        return sum(r.valid_calls for r in self.results)

    @property
    def schema_valid_share(self) -> float | None:
        """Schema-valid calls over all calls made; None when no call was made."""
        return self.valid_calls / self.calls if self.calls else None

    def per_item(self) -> dict[str, float]:
        """Mean prompt tokens, completion tokens and seconds per item."""
        n = len(self.results) or 1
        return {
            "prompt_tokens": sum(r.output.usage.prompt_tokens for r in self.results) / n,
            "completion_tokens": sum(r.output.usage.completion_tokens for r in self.results) / n,
            "seconds": sum(r.output.seconds for r in self.results) / n,
        }

    def failures(self) -> list[ItemResult]:
        return [r for r in self.results if not r.passed]


def _share(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def reasons(results: Sequence[ItemResult]) -> dict[str, int]:
    """How many items failed for each reason."""
    counts: dict[str, int] = {}
    for r in results:
        if not r.passed:
            counts[r.reason] = counts.get(r.reason, 0) + 1
    return counts
