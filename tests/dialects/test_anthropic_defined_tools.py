"""Which tools of a Messages request reach the model, and in what shape."""

from __future__ import annotations

from farmhand.dialects.anthropic.tools import read_tools


def test_older_text_editors_can_also_undo_and_the_newest_cannot() -> None:
    read = read_tools(
        [
            {"type": "text_editor_20250124", "name": "str_replace_editor"},
            {"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"},
        ]
    )
    older, newest = (d.parameters["properties"]["command"]["enum"] for d in read.definitions)
    assert older == ["view", "create", "str_replace", "insert", "undo_edit"]
    assert newest == ["view", "create", "str_replace", "insert"]


def test_server_tools_are_named_as_left_out_and_custom_tools_kept_in_order() -> None:
    weather = {"name": "weather", "input_schema": {"type": "object", "properties": {}}}
    read = read_tools(
        [
            {"type": "web_search_20250305", "name": "web_search"},
            weather,
            {"type": "code_execution_20250522"},
        ]
    )
    assert [d.name for d in read.definitions] == ["weather"]
    assert read.ignored == ["web_search", "code_execution_20250522"]


def test_each_request_gets_its_own_copy_of_a_defined_schema() -> None:
    first = read_tools([{"type": "bash_20250124", "name": "bash"}]).definitions[0]
    first.parameters["properties"].clear()
    again = read_tools([{"type": "bash_20250124", "name": "bash"}]).definitions[0]
    assert set(again.parameters["properties"]) == {"command", "restart"}
