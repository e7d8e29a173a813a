"""`require_approval`: which calls ask first, and what the model is told when they may not run."""

from __future__ import annotations

import pytest
from mcp import types
from tests.support.asking import Scripted, asking

from farmhand.config.models import McpServerConfig
from farmhand.toolsets.mcp.approval import gated, needs_approval
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.elicitation import NO_ONE, Answer

pytestmark = pytest.mark.anyio


def tool(**hints: bool) -> types.Tool:
    annotations = types.ToolAnnotations(**hints) if hints else None  # type: ignore[arg-type]
    return types.Tool(name="t", input_schema={"type": "object"}, annotations=annotations)


@pytest.mark.parametrize(
    ("policy", "hints", "asks"),
    [
        ("never", {}, False),
        ("destructive", {}, True),  # the spec's defaults: may destroy
        ("destructive", {"read_only_hint": False}, True),
        ("destructive", {"destructive_hint": True}, True),
        ("destructive", {"read_only_hint": True}, False),
        ("destructive", {"read_only_hint": False, "destructive_hint": False}, False),
        ("always", {"read_only_hint": True}, True),
    ],
)
def test_which_tools_ask(policy: str, hints: dict[str, bool], asks: bool) -> None:
    assert needs_approval(policy, tool(**hints)) is asks  # type: ignore[arg-type]


def test_a_tool_the_server_did_not_list_asks() -> None:
    assert needs_approval("destructive", None)


def test_the_switch_defaults_to_never_and_rejects_other_values() -> None:
    assert asking().require_approval == "never"
    with pytest.raises(ValueError, match="require_approval"):
        McpServerConfig.model_validate({"name": "x", "command": "y", "require_approval": "yes"})


async def run_calls(
    server: McpServerConfig, asker: Scripted | None, *calls: tuple[str, dict[str, str]]
) -> list[tuple[str, bool]]:
    async with MCPToolset.from_config(server, asker=asker) as toolset:
        gate = gated(toolset, server, asker or NO_ONE)
        await gate.list_tools()
        outputs = [await gate.call_tool(name, arguments) for name, arguments in calls]
    return [(o.text, o.is_error) for o in outputs]


async def test_destructive_asks_before_a_destructive_tool_only() -> None:
    asker = Scripted(lambda q: Answer.accept())
    results = await run_calls(
        asking(require_approval="destructive"),
        asker,
        ("wipe", {"target": "/tmp/x"}),
        ("peek", {}),
        ("slow", {"seconds": "0"}),
    )
    assert results == [("wiped /tmp/x", False), ("all there", False), ("slept", False)]
    (question,) = asker.questions
    assert (question.kind, question.server, question.tool) == ("approval", "asking", "wipe")
    assert question.arguments == {"target": "/tmp/x"}
    assert 'Run asking:wipe with {"target": "/tmp/x"}?' in question.message
    assert "require_approval: destructive" in question.message


async def test_always_asks_even_for_a_read_only_tool() -> None:
    asker = Scripted(lambda q: Answer.accept())
    assert await run_calls(asking(require_approval="always"), asker, ("peek", {})) == [
        ("all there", False)
    ]
    assert [q.tool for q in asker.questions] == ["peek"]


async def test_never_runs_without_asking() -> None:
    asker = Scripted(lambda q: Answer.decline())
    assert await run_calls(asking(), asker, ("wipe", {"target": "t"})) == [("wiped t", False)]
    assert asker.questions == []


@pytest.mark.parametrize(
    ("answer", "told"),
    [
        (Answer.decline(), "asking:wipe was not run: the user declined it."),
        (Answer.cancel(), "asking:wipe was not run: the user dismissed the request"),
        (
            Answer.decline("no answer came within 300 s"),
            "the user declined it. Do not call it again unless asked. (no answer came within",
        ),
    ],
)
async def test_a_call_the_user_did_not_approve_is_not_run_and_the_model_is_told(
    answer: Answer, told: str
) -> None:
    results = await run_calls(
        asking(require_approval="destructive"),
        Scripted(lambda q: answer),
        ("wipe", {"target": "t"}),
    )
    ((text, is_error),) = results
    assert is_error and told in text
    assert "wiped" not in text


async def test_where_no_one_can_answer_the_call_is_refused_saying_why() -> None:
    ((text, is_error),) = await run_calls(
        asking(require_approval="destructive"), None, ("wipe", {"target": "t"})
    )
    assert is_error
    assert text.startswith("asking:wipe was not run: it needs the user's approval")
    assert "require_approval: destructive" in text
    assert "no one can answer: this farmhand has no user to ask" in text
