"""The tools an Anthropic client sends, through the real `anthropic` SDK against a live app
with a scripted model: Anthropic-defined client tools (bash, the text editor) are offered
with their documented input shape and come back as tool_use blocks; server tools farmhand
cannot run are left out, named in the `x-farmhand-ignored-tools` header, never a 400."""

from __future__ import annotations

from tests.support.farms import USER, AnthropicFarm

from farmhand.dialects.anthropic.tools import IGNORED_TOOLS_HEADER
from farmhand.messages import ToolCall
from farmhand.providers.scripted import Step

BASH = {"type": "bash_20250124", "name": "bash"}
EDITOR = {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}
WEB_SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 3}
WEATHER = {"name": "weather", "input_schema": {"type": "object", "properties": {}}}


def test_bash_and_the_text_editor_are_offered_with_anthropics_input_shape(
    anthropic_farm: AnthropicFarm,
) -> None:
    anthropic_farm.script.add(Step.calls(ToolCall("bash", {"command": "ls"})))
    reply = anthropic_farm.ask(tools=[BASH, EDITOR])
    [use] = [block for block in reply.content if block.type == "tool_use"]
    assert (use.name, use.input, reply.stop_reason) == ("bash", {"command": "ls"}, "tool_use")
    offered = {tool.name: tool.parameters for tool in anthropic_farm.script.requests[0].tools}
    assert set(offered) == {"bash", "str_replace_based_edit_tool"}
    assert offered["bash"]["properties"]["command"]["type"] == "string"
    editor = offered["str_replace_based_edit_tool"]
    assert editor["required"] == ["command", "path"]
    assert editor["properties"]["command"]["enum"] == ["view", "create", "str_replace", "insert"]


def test_server_tools_are_left_out_and_named_in_a_header(anthropic_farm: AnthropicFarm) -> None:
    anthropic_farm.script.add(Step.text("Sunny."), Step.text("Sunny."))
    raw = anthropic_farm.client.messages.with_raw_response.create(
        model="farm", max_tokens=50, messages=USER, tools=[WEB_SEARCH, WEATHER]
    )
    assert raw.headers[IGNORED_TOOLS_HEADER] == "web_search"
    assert raw.parse().content[0].text == "Sunny."
    assert [tool.name for tool in anthropic_farm.script.requests[0].tools] == ["weather"]
    with anthropic_farm.client.messages.with_streaming_response.create(
        model="farm", max_tokens=50, messages=USER, tools=[WEB_SEARCH], stream=True
    ) as streamed:
        assert streamed.headers[IGNORED_TOOLS_HEADER] == "web_search"
        assert "Sunny." in streamed.read().decode()


def test_an_anthropic_defined_tool_without_its_name_is_400(anthropic_farm: AnthropicFarm) -> None:
    response = anthropic_farm.http.post(
        "/v1/messages",
        json={
            "model": "farm",
            "max_tokens": 5,
            "messages": USER,
            "tools": [{"type": "bash_20250124"}],
        },
    )
    assert response.status_code == 400
    assert "bash_20250124" in response.json()["error"]["message"]
