"""Chat templates render the way Hugging Face's transformers renders them."""

from __future__ import annotations

import pytest
from tests.support.corpus import CORPUS

from farmhand.errors import ModelError
from farmhand.messages import Message, ToolCall, ToolResult
from farmhand.prompting.templates import render_chat_template
from farmhand.tools.definition import ToolDefinition

TEMPLATES = CORPUS / "templates"
QWEN = TEMPLATES / "Qwen-Qwen2.5-7B-Instruct.jinja"

LIST = ToolDefinition(
    "filesystem:list_directory",
    "List a folder",
    {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]},
)


def test_qwen_template_with_tools_and_a_full_tool_round() -> None:
    call = ToolCall("filesystem:list_directory", {"path": "/data"}, id="call_1")
    messages = [
        Message.system("Be brief."),
        Message.user("What is in /data?"),
        Message.assistant("", (call,)),
        Message.tool(ToolResult("call_1", call.name, "[FILE] notes.txt")),
    ]
    prompt = render_chat_template(QWEN.read_text(), messages, [LIST])
    expected_tool_line = (
        '{"type": "function", "function": {"name": "filesystem:list_directory", "description":'
        ' "List a folder", "parameters": {"type": "object", "properties": {"path": {"type":'
        ' "string"}}, "required": ["path"]}}}'
    )
    assert prompt.startswith("<|im_start|>system\nBe brief.\n\n# Tools\n")
    assert f"<tools>\n{expected_tool_line}\n</tools>" in prompt
    assert (
        '<|im_start|>assistant\n<tool_call>\n{"name": "filesystem:list_directory", "arguments":'
        ' {"path": "/data"}}\n</tool_call><|im_end|>\n'
    ) in prompt
    assert (
        "<|im_start|>user\n<tool_response>\n[FILE] notes.txt\n</tool_response><|im_end|>\n"
        in prompt
    )
    assert prompt.endswith("<|im_start|>assistant\n")


def test_without_tools_the_template_uses_its_plain_branch() -> None:
    prompt = render_chat_template(QWEN.read_text(), [Message.user("hi")])
    assert prompt == (
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful"
        " assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n"
    )


def test_non_ascii_survives_tojson() -> None:
    tool = ToolDefinition("café", "Crème brûlée", {"type": "object"})
    prompt = render_chat_template(QWEN.read_text(), [Message.user("hé")], [tool])
    assert '"description": "Crème brûlée"' in prompt


def test_template_errors_are_model_errors() -> None:
    source = "{{ raise_exception('only user and assistant roles are supported') }}"
    with pytest.raises(ModelError, match="only user and assistant roles"):
        render_chat_template(source, [Message.user("x")])


def test_the_sandbox_refuses_unsafe_attribute_access() -> None:
    with pytest.raises(ModelError):
        render_chat_template(
            "{{ messages.__class__.__mro__[1].__subclasses__() }}", [Message.user("x")]
        )
