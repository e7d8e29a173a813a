"""Responses custom tools through the real `openai` SDK against a live app with a scripted
model: the model is offered a function of one `input` string, its call comes back as a
`custom_tool_call` (streamed with custom_tool_call_input events), and the client's
`custom_tool_call_output` reaches the model as the call's result."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from tests.server.test_responses_api import written
from tests.support.farms import Farm

from farmhand.messages import Message, ToolCall
from farmhand.providers.scripted import Step
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import ToolDefinition

PATCH = '*** Begin Patch\n*** Add File: hay.txt\n+dry "hay" é\n*** End Patch\n'
APPLY_PATCH: Any = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Use `apply_patch` to edit files.",
    "format": {
        "type": "grammar",
        "syntax": "lark",
        "definition": 'start: begin_patch hunk+ end_patch\nbegin_patch: "*** Begin Patch" LF',
    },
}


def test_a_custom_tool_call_round_trip_through_custom_tool_call_output(farm: Farm) -> None:
    def offered(_: Sequence[Message], tools: Sequence[ToolDefinition]) -> None:
        (tool,) = tools
        assert tool.name == "apply_patch" and tool.parameters["required"] == ["input"]
        assert "lark grammar:" in tool.description

    call = ToolCall("apply_patch", {"input": PATCH}, "call_p1")
    farm.script.add(Step.calls(call, text="Patching.", expect=offered))
    first = farm.client.responses.create(
        model="farm",
        input="Add hay.txt",
        tools=[APPLY_PATCH],
        tool_choice={"type": "custom", "name": "apply_patch"},
    )
    assert farm.script.requests[0].settings.tool_choice == ToolChoice.tool("apply_patch")
    assert [item.type for item in first.output] == ["message", "custom_tool_call"]
    custom = first.output[1]
    assert custom.type == "custom_tool_call"
    assert (custom.name, custom.call_id, custom.input) == ("apply_patch", "call_p1", PATCH)
    notes = first.model_extra["farmhand"]["notes"]  # type: ignore[index]
    assert any("lark grammar is not enforced" in note for note in notes)

    def sees_result(messages: Sequence[Message], _: Sequence[ToolDefinition]) -> None:
        assert messages[-2].tool_calls == (call,)
        assert (messages[-1].role, messages[-1].content) == ("tool", "Done!")
        assert (messages[-1].tool_call_id, messages[-1].name) == ("call_p1", "apply_patch")

    farm.script.add(Step.text("hay.txt is added.", expect=sees_result))
    second = farm.client.responses.create(
        model="farm",
        input=[
            {"role": "user", "content": "Add hay.txt"},
            *[item.model_dump(exclude_none=True) for item in first.output],
            {"type": "custom_tool_call_output", "call_id": "call_p1", "output": "Done!"},
        ],
        tools=[APPLY_PATCH],
        store=False,
    )
    assert second.output_text == "hay.txt is added."


def test_a_streamed_custom_tool_call_writes_its_input_as_deltas(farm: Farm) -> None:
    reply = (
        '<tool_call>{"name": "apply_patch", "arguments": {"input": '
        + json.dumps(PATCH)
        + "}}</tool_call>"
    )
    farm.script.add(written(reply, ["apply_patch"]))
    with farm.client.responses.stream(
        model="farm",
        input="Add hay.txt",
        tools=[APPLY_PATCH],
        store=False,
    ) as stream:
        events = list(stream)
        final = stream.get_final_response()
    kinds = [e.type for e in events]
    deltas = [e.delta for e in events if e.type == "response.custom_tool_call_input.delta"]
    assert len(deltas) >= 3 and "".join(deltas) == PATCH
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        *["response.custom_tool_call_input.delta"] * len(deltas),
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]
    done = next(e for e in events if e.type == "response.custom_tool_call_input.done")
    assert done.input == PATCH
    (item,) = final.output
    assert item.type == "custom_tool_call" and item.input == PATCH
    assert item.id == done.item_id
