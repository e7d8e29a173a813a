"""Responses custom tools: offered as a function with one `input` string, read back from
`custom_tool_call` items, rendered as `custom_tool_call` items with their input streamed."""

from __future__ import annotations

import json
from typing import Any

import pytest

from farmhand.dialects.responses.custom import (
    INPUT_DESCRIPTION,
    call_input,
    custom_tool,
    streamed_input,
)
from farmhand.dialects.responses.items import read_conversation
from farmhand.dialects.responses.render import ResponseBuilder
from farmhand.dialects.responses.request import parse_responses
from farmhand.errors import RequestError
from farmhand.messages import ToolCall, Usage
from farmhand.runtime.events import LoopFinished, ToolCallWriting
from farmhand.tools.choice import ToolChoice

PATCH = '*** Begin Patch\n*** Add File: a.txt\n+héllo "quoted"\t😀\\n\n*** End Patch'
APPLY_PATCH = {
    "type": "custom",
    "name": "apply_patch",
    "description": "Edit files with a patch.",
    "format": {"type": "grammar", "syntax": "lark", "definition": 'start: "*** Begin Patch"'},
}


def test_a_custom_tool_is_offered_as_a_function_of_one_input_string() -> None:
    offered = custom_tool({"type": "custom", "name": "notes", "description": "Jot."}, "tools[0]")
    assert offered.note is None
    definition = offered.definition
    assert (definition.name, definition.description) == ("notes", "Jot.")
    assert definition.parameters["required"] == ["input"]
    assert definition.parameters["properties"]["input"] == {
        "type": "string",
        "description": INPUT_DESCRIPTION,
    }


def test_a_grammar_is_shown_to_the_model_and_noted_as_not_enforced() -> None:
    offered = custom_tool(APPLY_PATCH, "tools[0]")
    assert offered.definition.description.startswith("Edit files with a patch.")
    assert 'lark grammar:\nstart: "*** Begin Patch"' in offered.definition.description
    assert offered.note is not None and "'apply_patch'" in offered.note
    assert "not enforced" in offered.note


@pytest.mark.parametrize(
    ("tool", "says"),
    [
        ({"type": "custom"}, 'needs a "name"'),
        ({"type": "custom", "name": "x", "format": {"type": "yaml"}}, '{"type": "text"}'),
        ({"type": "custom", "name": "x", "format": "grammar"}, '{"type": "text"}'),
        (
            {"type": "custom", "name": "x", "format": {"type": "grammar", "syntax": "peg"}},
            '"lark" or "regex"',
        ),
    ],
)
def test_a_malformed_custom_tool_is_a_request_error(tool: dict[str, Any], says: str) -> None:
    with pytest.raises(RequestError) as caught:
        custom_tool(tool, "tools[0]")
    assert says in str(caught.value) and caught.value.param == "tools"


def test_every_prefix_of_the_arguments_decodes_to_a_prefix_of_the_input() -> None:
    for ascii_only in (True, False):
        arguments = json.dumps({"input": PATCH}, ensure_ascii=ascii_only)
        seen = ""
        for end in range(len(arguments) + 1):
            text = streamed_input(arguments[:end])
            assert PATCH.startswith(text), (arguments[:end], text)
            assert text.startswith(seen)  # it only grows
            seen = text
        assert seen == PATCH


def test_arguments_without_an_input_string_decode_to_nothing() -> None:
    assert streamed_input('{"other": "x"}') == ""
    assert streamed_input('<tool_call>{"input": "x"}') == ""
    assert streamed_input('{"input": 5}') == ""
    assert streamed_input('{ "input" :  "ab') == "ab"


def test_the_call_input_is_the_input_argument_or_the_arguments_json() -> None:
    assert call_input(ToolCall("t", {"input": PATCH})) == PATCH
    assert json.loads(call_input(ToolCall("t", {"patch": "x"}))) == {"patch": "x"}


def test_custom_tools_in_the_request_and_in_a_namespace_are_offered_and_noted() -> None:
    parsed = parse_responses(
        {
            "model": "m",
            "input": "edit",
            "tools": [
                APPLY_PATCH,
                {"type": "namespace", "name": "ns", "tools": [{"type": "custom", "name": "run"}]},
                {"type": "web_search"},
            ],
            "tool_choice": {"type": "custom", "name": "apply_patch"},
        }
    )
    assert [t.name for t in parsed.tools.client] == ["apply_patch", "run"]
    assert parsed.tools.functions["run"].namespace == "ns"
    assert all(f.custom for f in parsed.tools.functions.values())
    assert parsed.tools.ignored == ["web_search"]
    assert len(parsed.notes) == 1 and "apply_patch" in parsed.notes[0]
    assert parsed.settings.tool_choice == ToolChoice.tool("apply_patch")


def test_custom_tool_items_sent_back_are_a_call_and_its_result() -> None:
    parsed = parse_responses(
        {
            "model": "m",
            "tools": [APPLY_PATCH],
            "input": [
                {"role": "user", "content": "edit"},
                {
                    "type": "custom_tool_call",
                    "call_id": "call_p",
                    "name": "apply_patch",
                    "input": PATCH,
                },
                {"type": "custom_tool_call_output", "call_id": "call_p", "output": "Done!"},
            ],
        }
    )
    messages = read_conversation(parsed).messages
    assert [m.role for m in messages] == ["user", "assistant", "tool"]
    assert messages[1].tool_calls == (ToolCall("apply_patch", {"input": PATCH}, "call_p"),)
    assert (messages[2].content, messages[2].tool_call_id) == ("Done!", "call_p")
    assert messages[2].name == "apply_patch"


def test_a_custom_call_is_rendered_with_its_input_streamed() -> None:
    parsed = parse_responses({"model": "m", "input": "edit", "tools": [APPLY_PATCH]})
    builder = ResponseBuilder(parsed)
    arguments = json.dumps({"input": PATCH})
    events = []
    for at in range(0, len(arguments), 7):
        piece = arguments[at : at + 7]
        events += builder.render(ToolCallWriting(0, "call_p", "apply_patch", piece, True))
    call = ToolCall("apply_patch", {"input": PATCH}, "call_p")
    events += builder.render(
        LoopFinished("", "client_tool_calls", 1, Usage(1, 1), (), pending_calls=(call,))
    )
    kinds = [e["type"] for e in events]
    deltas = [e["delta"] for e in events if e["type"] == "response.custom_tool_call_input.delta"]
    assert kinds == [
        "response.output_item.added",
        *["response.custom_tool_call_input.delta"] * len(deltas),
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert len(deltas) > 3 and "".join(deltas) == PATCH
    done = events[-3]
    assert done["input"] == PATCH and done["item_id"].startswith("ctc_")
    item = builder.response()["output"][0]
    assert item == {
        "id": done["item_id"],
        "type": "custom_tool_call",
        "status": "completed",
        "call_id": "call_p",
        "name": "apply_patch",
        "input": PATCH,
    }
    assert "function_call" not in json.dumps(events)


def test_a_custom_call_made_whole_is_rendered_at_the_end() -> None:
    parsed = parse_responses({"model": "m", "input": "edit", "tools": [APPLY_PATCH]})
    builder = ResponseBuilder(parsed)
    call = ToolCall("apply_patch", {"input": PATCH}, "call_p")
    events = builder.render(
        LoopFinished("", "client_tool_calls", 1, Usage(1, 1), (), pending_calls=(call,))
    )
    assert [e["type"] for e in events] == [
        "response.output_item.added",
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert builder.response()["output"][0]["input"] == PATCH
