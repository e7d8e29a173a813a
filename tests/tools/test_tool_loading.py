"""load_tools: inline lists, JSON and YAML files, and errors that name the file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from farmhand.errors import ConfigError
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.loading import load_tools

SCHEMA: dict[str, Any] = {"type": "object", "properties": {"city": {"type": "string"}}}
OPENAI_TOOLS = [
    {"type": "function", "function": {"name": "weather", "description": "W", "parameters": SCHEMA}}
]
EXPECTED = [ToolDefinition("weather", "W", SCHEMA)]

YAML_TOOLS = """\
- name: weather
  description: W
  input_schema:
    type: object
    properties:
      city: {type: string}
"""


def test_an_inline_list_in_any_format() -> None:
    assert load_tools(OPENAI_TOOLS) == EXPECTED
    assert load_tools([{"name": "weather", "description": "W", "inputSchema": SCHEMA}]) == EXPECTED


def test_a_file_url_is_relative_to_the_base_dir(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    (tmp_path / "tools" / "t.json").write_text(json.dumps(OPENAI_TOOLS))

    assert load_tools("file://tools/t.json", base_dir=tmp_path) == EXPECTED


@pytest.mark.parametrize("name", ["t.yaml", "t.yml"])
def test_yaml_files(tmp_path: Path, name: str) -> None:
    (tmp_path / name).write_text(YAML_TOOLS)

    assert load_tools(name, base_dir=tmp_path) == EXPECTED


def test_a_plain_absolute_path(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps(OPENAI_TOOLS))

    assert load_tools(path) == EXPECTED
    assert load_tools(f"file://{path}", base_dir="/elsewhere") == EXPECTED


def test_a_missing_file_is_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"nope\.json: tools file not found"):
        load_tools("file://nope.json", base_dir=tmp_path)


def test_bad_json_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text('[\n  {"name": "x",\n  }\n]')

    with pytest.raises(ConfigError, match=r"t\.json: invalid JSON at line 3, column 3"):
        load_tools("t.json", base_dir=tmp_path)


def test_bad_yaml_names_the_line(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("- name: x\n  input_schema: {type: object\n- name: y\n")

    with pytest.raises(ConfigError, match=r"t\.yaml: invalid YAML at line 3"):
        load_tools("t.yaml", base_dir=tmp_path)


def test_a_file_that_is_not_a_list(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text(json.dumps(OPENAI_TOOLS[0]))

    with pytest.raises(ConfigError) as error:
        load_tools("t.json", base_dir=tmp_path)

    assert "t.json: expected a list of tools at the top level" in str(error.value)
    assert "an object with keys type, function" in str(error.value)
    assert "wrap the tool(s) in a list" in str(error.value)


def test_an_empty_yaml_file(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("# nothing yet\n")

    with pytest.raises(ConfigError, match="got nothing \\(the file is empty\\)"):
        load_tools("t.yaml", base_dir=tmp_path)


def test_an_unrecognised_tool_is_named_by_file_and_index(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text(YAML_TOOLS + "- description: no name here\n")

    with pytest.raises(ConfigError) as error:
        load_tools("t.yaml", base_dir=tmp_path)

    message = str(error.value)
    assert message.startswith(f"{tmp_path / 't.yaml'}: tool 1 is not a tool definition")
    assert "no 'name'" in message


def test_an_unsupported_suffix(tmp_path: Path) -> None:
    (tmp_path / "t.txt").write_text("[]")

    with pytest.raises(ConfigError, match=r"unsupported tools file type '\.txt'; use \.json"):
        load_tools("t.txt", base_dir=tmp_path)


def test_duplicate_names_are_refused() -> None:
    with pytest.raises(ConfigError, match=r"tools: tool names must be unique.*weather"):
        load_tools(OPENAI_TOOLS * 2)


def test_an_inline_error_is_prefixed_with_tools() -> None:
    with pytest.raises(ConfigError, match=r"^tools: tool 0 is not a tool definition"):
        load_tools([{"description": "x"}])


def test_a_spec_that_is_neither_list_nor_path() -> None:
    with pytest.raises(ConfigError, match="list of tool definitions or a file://path"):
        load_tools(42)  # type: ignore[arg-type]
