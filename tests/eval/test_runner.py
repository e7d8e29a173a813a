"""Running suites with the scripted provider: the built-in suite end to end, what each turn
is sent, JIT discovery, errors, and the JSON report."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest
from tests.eval.scripted_model import perfect_model, right_step

from farmhand.errors import ProviderError
from farmhand.eval.report import as_json, table
from farmhand.eval.runner import RunOptions, run_suite
from farmhand.eval.scoring import TargetSummary
from farmhand.eval.suite import BUILTIN, load_suite
from farmhand.messages import Message, ToolCall, Usage
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.tools.choice import AUTO
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.mcp.discovery import DISCOVER

pytestmark = pytest.mark.anyio


async def test_a_perfect_model_passes_every_builtin_case() -> None:
    suite = load_suite(BUILTIN)
    provider = perfect_model(suite)
    seen: list[str] = []
    results = await run_suite(provider, suite, on_item=lambda r: seen.append(r.case_id))
    provider.assert_done()
    assert [r.reason for r in results if not r.passed] == []
    assert seen == [c.id for c in suite.cases]
    summary = TargetSummary("perfect", tuple(results))
    assert summary.mean_accuracy == 1.0
    assert summary.schema_valid_share == 1.0
    assert summary.per_item()["prompt_tokens"] == 100


async def test_each_turn_gets_the_case_conversation_tools_and_greedy_settings() -> None:
    suite = load_suite(BUILTIN).select(["follow_up"], limit=1)
    (case,) = suite.cases
    provider = ScriptedProvider([right_step(case)])
    await run_suite(provider, suite, RunOptions(temperature=0.0, seed=7))
    (request,) = provider.requests
    assert request.messages == case.messages
    assert request.tools == case.tools
    assert (request.settings.temperature, request.settings.seed) == (0.0, 7)
    assert request.settings.tool_choice == AUTO


async def test_a_wrong_model_fails_each_kind_for_its_reason() -> None:
    suite = load_suite(BUILTIN)
    single = next(c for c in suite.cases if c.category == "single")
    parallel = next(c for c in suite.cases if c.category == "parallel")
    no_call = next(c for c in suite.cases if c.category == "no_call")
    follow_up = next(c for c in suite.cases if c.category == "follow_up" and c.answer_contains)
    chosen = type(suite)("picked", (single, parallel, no_call, follow_up))
    first_parallel = right_step(parallel).events[0]
    provider = ScriptedProvider(
        [
            Step.text("I cannot check that."),
            [first_parallel],  # one of the parallel calls only
            Step.calls(ToolCall(no_call.tools[0].name, {})),
            ProviderError("backend refused"),
        ]
    )
    results = await run_suite(provider, chosen)
    assert [r.reason for r in results] == ["no_call", "wrong_count", "unexpected_call", "error"]
    assert results[2].valid_calls == 0 or no_call.tools[0].parameters.get("required") == []
    assert "backend refused" in results[3].detail


async def test_jit_discovers_then_the_real_call_is_judged() -> None:
    suite = load_suite(BUILTIN).select(["single"], limit=1)
    offered: list[list[str]] = []

    def record(messages: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        offered.append([t.name for t in tools])

    provider = ScriptedProvider(
        [
            Step.calls(
                ToolCall(DISCOVER, {"pattern": "*weather*"}), usage=Usage(50, 5), expect=record
            ),
            Step.calls(
                ToolCall("suite:get_weather", {"city": "Paris"}), usage=Usage(80, 8), expect=record
            ),
        ]
    )
    (result,) = await run_suite(provider, suite, RunOptions(jit=True))
    provider.assert_done()
    assert offered == [[DISCOVER], [DISCOVER, "suite:get_weather"]]
    assert result.passed, result.detail
    assert result.output.calls[0].name == "get_weather"
    assert result.output.usage == Usage(130, 13)
    second_turn = provider.requests[1].messages
    assert second_turn[-1].role == "tool"
    assert "suite:get_weather" in second_turn[-1].content


async def test_jit_model_that_only_discovers_is_judged_on_its_last_turn() -> None:
    suite = load_suite(BUILTIN).select(["single"], limit=1)
    discover = Step.calls(ToolCall(DISCOVER, {"pattern": "*"}))
    provider = ScriptedProvider([discover, discover, discover, discover])
    (result,) = await run_suite(provider, suite, RunOptions(jit=True))
    provider.assert_done()
    assert result.reason == "no_call"


async def test_json_report_has_every_measure_and_item() -> None:
    suite = load_suite(BUILTIN).select(["single", "no_call"], limit=2)
    provider = ScriptedProvider(
        [
            right_step(suite.cases[0]),
            Step.text("no tool"),
            right_step(suite.cases[2]),
            Step.calls(ToolCall("get_weather", {"city": "Paris"})),
        ]
    )
    results = await run_suite(provider, suite)
    report = as_json(suite.name, [TargetSummary("t", tuple(results), "scripted")])
    json.dumps(report)  # serialisable as it is
    (target,) = report["targets"]
    assert target["categories"] == {
        "single": {"passed": 1, "total": 2, "accuracy": 0.5},
        "no_call": {"passed": 1, "total": 2, "accuracy": 0.5},
    }
    assert target["mean_accuracy"] == 0.5
    assert target["schema_valid"]["calls"] == 2
    assert target["failures_by_reason"] == {"no_call": 1, "unexpected_call": 1}
    assert set(target["per_item"]) == {"prompt_tokens", "completion_tokens", "seconds"}
    assert [i["passed"] for i in target["items"]] == [True, False, True, False]
    assert target["items"][3]["calls"] == [{"name": "get_weather", "arguments": {"city": "Paris"}}]


async def test_table_puts_targets_side_by_side() -> None:
    suite = load_suite(BUILTIN).select(["single"], limit=1)
    good = await run_suite(perfect_model(suite), suite)
    bad = await run_suite(ScriptedProvider([Step.text("no")]), suite)
    grid = table("s", [TargetSummary("good", tuple(good)), TargetSummary("bad", tuple(bad))])
    assert [c.header for c in grid.columns] == ["", "good", "bad"]
    cells = {col.header: list(col.cells) for col in grid.columns}
    assert cells[""][0] == "single"
    assert cells["good"][0] == "100% (1/1)"
    assert cells["bad"][0] == "0% (0/1)"
