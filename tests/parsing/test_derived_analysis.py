"""The template analysis: the shape and markers found by diffing a template's renders.

Real templates from llama.cpp's corpus (tests/corpora/llamacpp/templates/autoparser)
and invented ones (derived_templates) of each shape; the markers asserted are the ones each
template writes.
"""

from __future__ import annotations

from dataclasses import replace

import pytest
from tests.support import derived_templates
from tests.support.corpus import template_text

from farmhand.parsing.derived.analysis import Derived, analyze
from farmhand.parsing.derived.explain import explain
from farmhand.parsing.derived.markers import split, tokens
from farmhand.parsing.registry import detect_family


def _markers(derived: Derived) -> dict[str, object]:
    """The fields that are set, without the note (prose, checked elsewhere)."""
    blank = Derived(derived.shape, "")
    return {
        k: v
        for k, v in vars(replace(derived, note="")).items()
        if v != getattr(blank, k) and k != "shape"
    }


def test_qwen3_coder_is_a_tag_per_argument() -> None:
    derived = analyze(template_text("Qwen3-Coder.jinja"))
    assert derived.shape == "tag_per_arg"
    assert _markers(derived) == {
        "assistant_start": ("<|im_start|>assistant",),
        "call_start": "<tool_call>\n<function=",
        "name_end": ">",
        "key_start": "<parameter=",
        "key_end": ">",
        "value_end": "</parameter>",
        "value_lead": "\n",  # the template writes a newline on each side of a value
        "value_trail": "\n",
        "call_end": "</function>\n</tool_call>",
    }


def test_glm_writes_keys_and_values_in_tags_of_their_own() -> None:
    derived = analyze(template_text("GLM-4.7-Flash.jinja"))
    assert derived.shape == "tag_per_arg"
    assert (derived.call_start, derived.call_end) == ("<tool_call>", "</tool_call>")
    assert (derived.key_start, derived.key_end) == ("<arg_key>", "</arg_key><arg_value>")
    assert derived.value_end == "</arg_value>"
    assert (derived.reasoning_start, derived.reasoning_end) == ("<think>", "</think>")


def test_dsml_markup_after_a_key_depends_on_the_value_type() -> None:
    # `string="true">` before a string, `string="false">` before a number: the key ends at
    # what both share first, the value starts after what they share last.
    derived = analyze(template_text("deepseek-ai-DeepSeek-V3.2.jinja"))
    assert derived.shape == "tag_per_arg"
    assert (derived.key_start, derived.key_end) == ('<｜DSML｜parameter name="', '" string="')
    assert derived.value_start == '">'
    assert derived.section_start == "<｜DSML｜function_calls>"
    assert derived.call_start == '<｜DSML｜invoke name="'


def test_kimi_k2_ids_are_the_call_header() -> None:
    derived = analyze(template_text("moonshotai-Kimi-K2.jinja"))
    assert derived.shape == "tag_json_args"
    assert _markers(derived) == {
        "assistant_start": ("<|im_assistant|>assistant<|im_middle|>",),
        "section_start": "<|tool_calls_section_begin|>",
        "section_end": "<|tool_calls_section_end|>",
        "call_start": "<|tool_call_begin|>functions.",
        "call_end": "<|tool_call_end|>",
        "name_end": ":",  # then the call's index, which differs per call
        "args_start": "<|tool_call_argument_begin|>",
        "header_is_id": True,
    }


def test_mistral_small_writes_a_call_id_between_name_and_arguments() -> None:
    derived = analyze(template_text("Mistral-Small-3.2-24B-Instruct-2506.jinja"))
    assert derived.shape == "tag_json_args"
    assert derived.call_start == "[TOOL_CALLS]"
    assert (derived.id_start, derived.id_end, derived.args_start) == (
        "[CALL_ID]",
        "[ARGS]",
        "[ARGS]",
    )


def test_hermes_is_a_json_call_in_tags_per_call() -> None:
    derived = analyze(template_text("NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"))
    assert derived.shape == "json_call"
    assert (derived.call_start, derived.call_end) == ("<tool_call>", "</tool_call>")
    assert (derived.name_key, derived.args_key, derived.array) == ("name", "arguments", False)


def test_command_r_keys_reasoning_and_content_markers() -> None:
    derived = analyze(template_text("Cohere2MoE.jinja"))
    assert derived.shape == "json_call"
    assert (derived.name_key, derived.args_key, derived.id_key) == (
        "tool_name",
        "parameters",
        "tool_call_id",
    )
    assert derived.array
    assert (derived.section_start, derived.section_end) == ("<|START_ACTION|>", "<|END_ACTION|>")
    assert (derived.reasoning_start, derived.reasoning_end) == (
        "<|START_THINKING|>",
        "<|END_THINKING|>",
    )
    assert (derived.content_start, derived.content_end) == ("<|START_TEXT|>", "<|END_TEXT|>")


def test_apertus_makes_the_name_the_object_key() -> None:
    derived = analyze(template_text("Apertus-8B-Instruct.jinja"))
    assert derived.shape == "json_call"
    assert (derived.name_key, derived.array) == ("", True)
    assert derived.section_start == "<|tools_prefix|>"


def test_reasoning_opened_by_the_prompt_keeps_the_header_apart() -> None:
    # Qwen 3.5's prompt ends with `<think>\n` (thinking on) or an empty block (off): the
    # header stops before `<think>`, and the empty block is a header too (nothing to read).
    derived = analyze(template_text("Qwen3.5-4B.jinja"))
    assert derived.assistant_start == (
        "<|im_start|>assistant",
        "<|im_start|>assistant\n<think>\n\n</think>\n\n",
    )


@pytest.mark.parametrize(
    ("template", "shape", "words"),
    [
        ("openai-gpt-oss-120b.jinja", "other", "Harmony"),
        ("google-gemma-4-31B-it.jinja", "other", "neither JSON nor a tag per argument"),
        ("meetkai-functionary-medium-v3.2.jinja", "other", "routing"),
        ("LFM2-8B-A1B.jinja", "no_calls", "does not write"),
        ("Kimi-K2-Thinking.jinja", "no_calls", "'append' of 'list' object is unsafe"),
    ],
)
def test_shapes_outside_the_three_say_why(template: str, shape: str, words: str) -> None:
    derived = analyze(template_text(template))
    assert (derived.shape, derived.in_scope) == (shape, False)
    assert words in derived.note


def test_invented_formats_are_derived_and_chosen_by_detection() -> None:
    per_arg = analyze(derived_templates.PER_ARG)
    assert (per_arg.shape, per_arg.section_start, per_arg.call_start) == (
        "tag_per_arg",
        "<calls>",
        '<invoke tool="',
    )
    assert (per_arg.key_start, per_arg.key_end, per_arg.value_end) == ('<arg key="', '">', "</arg>")
    tag_json = analyze(derived_templates.TAG_JSON)
    assert (tag_json.shape, tag_json.call_start, tag_json.name_end, tag_json.call_end) == (
        "tag_json_args",
        "<|fn|>",
        "<|fn_args|>",
        "<|fn_end|>",
    )
    json_call = analyze(derived_templates.JSON_CALL)
    assert (json_call.shape, json_call.name_key, json_call.args_key) == (
        "json_call",
        "tool",
        "input",
    )
    for template in (derived_templates.PER_ARG, derived_templates.TAG_JSON):
        assert analyze(template).reasoning_start == "<|thought|>"
        assert detect_family(template) == "auto"


def test_garbage_templates_are_not_derived() -> None:
    for template in ("", "{{ raise_exception('no') }}", "{% for %}", "plain text"):
        assert not analyze(template).in_scope
        assert detect_family(template) == "generic"


def test_the_explanation_names_shape_and_markers() -> None:
    lines = explain(analyze(derived_templates.PER_ARG))
    assert lines[0].startswith("shape: a tag with the name, then a tag per argument")
    assert "the calls open with: <calls>" in lines
    assert 'each call opens with: <invoke tool="' in lines
    assert 'each argument: <arg key="KEY">VALUE</arg>' in lines
    assert "reasoning opens with: <|thought|>" in lines


def test_diff_keeps_special_tokens_whole() -> None:
    # `<|im_end|>` and `<tool_call>` share `<`: it belongs to neither side's prefix.
    parts = split("a\n<|im_end|>", "a\n<tool_call>x</tool_call><|im_end|>")
    assert (parts.prefix, parts.left, parts.suffix) == ("a\n", "", "<|im_end|>")
    assert parts.right == "<tool_call>x</tool_call>"
    assert tokens("<tool_call>\n<function=") == ("<tool_call>", "<function=")
