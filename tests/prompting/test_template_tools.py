"""What a chat template does with tools: whether it renders them, and Llama 3.1's built-in
tools reaching its template as `builtin_tools` (llama.cpp's copies of the real templates)."""

from __future__ import annotations

from tests.support.corpus import template_text

from farmhand.messages import Message
from farmhand.prompting.template_tools import builtin_tools_of, renders_tools
from farmhand.providers.llamacpp.turn_template import TurnTemplate
from farmhand.tools.definition import ToolDefinition

LLAMA_31 = template_text("meta-llama-Llama-3.1-8B-Instruct.jinja")
TOKENS = {"bos": "<|begin_of_text|>", "eos": "<|eot_id|>"}


def _tool(name: str) -> ToolDefinition:
    return ToolDefinition(
        name, f"The {name} tool.", {"type": "object", "properties": {"query": {"type": "string"}}}
    )


def test_templates_that_render_tools_are_told_from_those_that_do_not() -> None:
    assert renders_tools(LLAMA_31)
    assert renders_tools(template_text("Qwen-Qwen2.5-7B-Instruct.jinja"))
    assert not renders_tools(template_text("microsoft-Phi-3.5-mini-instruct.jinja"))
    # Gemma 2 refuses a system message; asked with a user turn alone, it still answers.
    gemma2 = (
        "{% for m in messages %}{% if m['role'] == 'system' %}"
        "{{ raise_exception('System role not supported') }}{% endif %}"
        "<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n{% endfor %}"
    )
    assert not renders_tools(gemma2)


def test_builtin_tools_reach_the_llama_31_template() -> None:
    template = TurnTemplate.of(LLAMA_31, TOKENS, model_name="llama-3.1", tool_parser=None)
    assert template.family == "llama3_x_builtin_tools"
    offered = [_tool(n) for n in ("brave_search", "get_time", "wolfram_alpha", "code_interpreter")]
    prompt = template.render([Message.user("Who won the 2026 cup?")], offered)
    # The template lists them (code_interpreter is implied by the ipython environment).
    assert "Environment: ipython\nTools: brave_search, wolfram_alpha\n\n" in prompt
    assert builtin_tools_of(LLAMA_31, offered) == [
        "brave_search",
        "wolfram_alpha",
        "code_interpreter",
    ]


def test_no_builtin_tools_without_their_names() -> None:
    template = TurnTemplate.of(LLAMA_31, TOKENS, model_name="llama-3.1", tool_parser=None)
    prompt = template.render([Message.user("What time is it?")], [_tool("get_time")])
    assert "Environment: ipython\n" in prompt  # any tools: ipython
    assert "Tools: " not in prompt
    # A template that does not read the variable is not handed it.
    plain = template_text("Qwen-Qwen2.5-7B-Instruct.jinja")
    assert builtin_tools_of(plain, [_tool("brave_search")]) == []
