"""The families of issue 28, each on cases written from its format (vLLM's reference parser
and the model card, named in each module's docstring): a call, parallel calls, calls inside
reasoning (closed, unclosed, opened by the prompt), unicode and escapes, markup inside a
string value, a tool's definition echoed, a fenced example naming no offered tool, no call,
output cut off at every position inside a call, and detection from the model's name and
template. The older formats that passed only some of these (Hunyuan-A13B and -7B, xLAM,
Mistral's `[TOOL_CALLS]` before tokenizer v11 and at v11) run the same cases."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.parsing.helpers import message_of
from tests.support.corpus import CORPUS

from farmhand.parsing.registry import detect_family, family_class, resolve_family

D = "｜DSML｜"
SCHEMAS = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
    }
}
PARIS = {"city": "Paris", "days": 3}
# A value with unicode, quotes, a backslash and the markup of calls (never a string a
# format cannot hold as written: none has its own closing tag inside).
TRICKY = 'Zürich "Ö" \\ <tool_call> {"name": "x"} ```'


def dsml(args: dict[str, Any]) -> str:
    params = "".join(
        f'<{D}parameter name="{k}" string="{str(isinstance(v, str)).lower()}">{v}</{D}parameter>\n'
        for k, v in args.items()
    )
    return f'<{D}invoke name="get_weather">\n{params}</{D}invoke>\n'


def k3(args: dict[str, Any]) -> str:
    params = "".join(
        f'<|open|>argument key="{k}" type="{"string" if isinstance(v, str) else "integer"}"'
        f"<|sep|>{v}<|close|>argument<|sep|>"
        for k, v in args.items()
    )
    return f'<|open|>call tool="get_weather" index="1"<|sep|>{params}<|close|>call<|sep|>'


def hy3(args: dict[str, Any]) -> str:
    params = "".join(
        f"<arg_key>{k}</arg_key>\n<arg_value>{v}</arg_value>\n" for k, v in args.items()
    )
    return f"<tool_call>get_weather<tool_sep>\n{params}</tool_call>"


def step3(args: dict[str, Any]) -> str:
    params = "".join(
        f'<steptml:parameter name="{k}">{v}</steptml:parameter>' for k, v in args.items()
    )
    return (
        "<｜tool_call_begin｜>function<｜tool_sep｜>"
        f'<steptml:invoke name="get_weather">{params}</steptml:invoke><｜tool_call_end｜>'
    )


def json_call(args: dict[str, Any]) -> str:
    return json.dumps({"name": "get_weather", "arguments": args}, ensure_ascii=False)


def hunyuan_7b(args: dict[str, Any]) -> str:
    fenced = json.dumps(args, ensure_ascii=False)
    return f"<tool_call>get_weather\n```json\n{fenced}\n```</tool_call>"


def mistral_v11(args: dict[str, Any]) -> str:
    return "[TOOL_CALLS]get_weather" + json.dumps(args, ensure_ascii=False)


def python_call(args: dict[str, Any]) -> str:
    return "get_weather(" + ", ".join(f"{k}={json.dumps(v)}" for k, v in args.items()) + ")"


def qwen(args: dict[str, Any]) -> str:
    params = "".join(f"<parameter={k}>\n{v}\n</parameter>\n" for k, v in args.items())
    return f"<tool_call>\n<function=get_weather>\n{params}</function>\n</tool_call>"


# family: (one call's text, how calls are put in a block, reasoning open / close tags)
FORMATS: dict[str, Any] = {
    "deepseek_v4": (dsml, lambda calls: f"<{D}tool_calls>\n{''.join(calls)}</{D}tool_calls>"),
    "kimi_k3": (k3, lambda calls: f"<|open|>tools<|sep|>{''.join(calls)}<|close|>tools<|sep|>"),
    "hy3": (hy3, lambda calls: f"<tool_calls>{''.join(calls)}</tool_calls>"),
    "step3": (step3, lambda calls: f"<｜tool_calls_begin｜>{''.join(calls)}<｜tool_calls_end｜>"),
    "minimax_m1": (json_call, lambda calls: "<tool_calls>\n" + "\n".join(calls) + "\n</tool_calls>"),  # noqa: E501
    "toolace": (python_call, lambda calls: "[" + ", ".join(calls) + "]"),
    "granite_20b_fc": (json_call, lambda calls: "".join(f"<function_call> {c}\n" for c in calls)),
    "qwen3_8": (qwen, lambda calls: "\n".join(calls)),
    "hunyuan": (json_call, lambda calls: "<tool_calls>[" + ", ".join(calls) + "]</tool_calls>"),
    "hunyuan_7b": (hunyuan_7b, lambda calls: "<tool_calls>" + "\n".join(calls) + "</tool_calls>"),
    "xlam": (json_call, lambda calls: "[" + ", ".join(calls) + "]"),
    "mistral_nemo": (json_call, lambda calls: "[TOOL_CALLS][" + ", ".join(calls) + "]"),
    "mistral_v03": (json_call, lambda calls: "[TOOL_CALLS] [" + ", ".join(calls) + "]"),
    "mistral_v11": (mistral_v11, "".join),
}  # fmt: skip
# The older formats that passed only some of these cases before.
OLDER = ["hunyuan", "hunyuan_7b", "xlam", "mistral_nemo", "mistral_v03", "mistral_v11"]
# Cases that are a family's other form: the family that reads them.
FAMILY_OF = {"hunyuan_7b": "hunyuan", "mistral_v03": "mistral_nemo", "mistral_v11": "mistral_nemo"}
THINK = {
    "kimi_k3": ("<|open|>think<|sep|>", "<|close|>think<|sep|>"),
}
NO_TEXT_BEFORE = {"toolace", "xlam"}  # the list must open the reply


def read(case: str, text: str, **options: Any) -> dict[str, Any]:
    """The message, the same fed whole and one character at a time."""
    cls = family_class(FAMILY_OF.get(case, case))
    options = {"tool_schemas": SCHEMAS, "known": set(SCHEMAS), **options}
    whole = message_of(cls, text, **options)
    assert message_of(cls, text, list(text), **options) == whole
    return whole


def output(family: str, *calls: dict[str, Any], text: str = "") -> str:
    write, block = FORMATS[family]
    return text + block([write(args) for args in calls])


@pytest.mark.parametrize("family", FORMATS)
def test_one_call(family: str) -> None:
    message = read(family, output(family, PARIS))
    assert message["tool_calls"] == [{"name": "get_weather", "arguments": PARIS}]
    assert message["content"] == ""


@pytest.mark.parametrize("family", FORMATS)
def test_parallel_calls_in_order(family: str) -> None:
    message = read(family, output(family, PARIS, {"city": "Oslo"}, {"city": "Rome", "days": 1}))
    assert [c["arguments"]["city"] for c in message["tool_calls"]] == ["Paris", "Oslo", "Rome"]


@pytest.mark.parametrize("family", sorted(set(FORMATS) - NO_TEXT_BEFORE))
def test_text_before_the_calls_is_text(family: str) -> None:
    message = read(family, output(family, PARIS, text="Let me check."))
    assert message["content"] == "Let me check."
    assert len(message["tool_calls"]) == 1


@pytest.mark.parametrize("family", FORMATS)
def test_unicode_escapes_and_markup_inside_a_string_value(family: str) -> None:
    message = read(family, output(family, {"city": TRICKY}))
    assert message["tool_calls"] == [{"name": "get_weather", "arguments": {"city": TRICKY}}]


@pytest.mark.parametrize("family", FORMATS)
def test_no_call_is_text(family: str) -> None:
    text = "It is sunny in Paris: [nice] weather, {no tools} needed."
    assert read(family, text) == {"content": text, "reasoning_content": "", "tool_calls": []}


# A tool's definition as the prompt shows it, and as a flat object, echoed where a call was
# wanted; at the reply's start, where a family without call tokens would look for calls.
DEFINITION = {
    "name": "get_weather",
    "description": "Get the weather.",
    "parameters": SCHEMAS["get_weather"],
}
ECHOES = [
    json.dumps({"type": "function", "function": DEFINITION}),
    "<tools>\n" + json.dumps({"type": "function", "function": DEFINITION}) + "\n</tools>",
    json.dumps([DEFINITION]),
    json.dumps(DEFINITION),
]


@pytest.mark.parametrize("family", FORMATS)
@pytest.mark.parametrize("echo", ECHOES)
def test_a_tool_definition_echoed_is_text(family: str, echo: str) -> None:
    assert read(family, echo) == {"content": echo, "reasoning_content": "", "tool_calls": []}


@pytest.mark.parametrize("family", FORMATS)
def test_a_fenced_example_naming_no_offered_tool_is_text(family: str) -> None:
    example = json.dumps({"name": "book_flight", "arguments": {"to": "Oslo"}})
    for fenced in (f"```json\n{example}\n```", f"```json\n[{example}]\n```"):
        text = f"Such a call looks like:\n{fenced}\nShall I?"
        assert read(family, text) == {"content": text, "reasoning_content": "", "tool_calls": []}


@pytest.mark.parametrize("family", FORMATS)
def test_a_call_inside_code_the_model_explains_is_text(family: str) -> None:
    code = (
        "From Python you would write:\n```python\nclient.run("
        f"{json_call(PARIS)})\nclient.run([get_weather(city='Oslo')])\n```\nThat sends it."
    )
    assert read(family, code) == {"content": code, "reasoning_content": "", "tool_calls": []}


@pytest.mark.parametrize("family", sorted(set(FORMATS) - {"toolace", "granite_20b_fc"}))
def test_reasoning_then_calls(family: str) -> None:
    open_tag, close_tag = THINK.get(family, ("<think>", "</think>"))
    message = read(family, f"{open_tag}Paris, 3 days.{close_tag}" + output(family, PARIS))
    assert message["reasoning_content"] == "Paris, 3 days."
    assert message["tool_calls"] == [{"name": "get_weather", "arguments": PARIS}]


@pytest.mark.parametrize("family", ["deepseek_v4", "kimi_k3", "hy3", "step3", "qwen3_8", *OLDER])
def test_calls_written_inside_unclosed_reasoning_end_it(family: str) -> None:
    open_tag, _ = THINK.get(family, ("<think>", "</think>"))
    message = read(family, f"{open_tag}I need the weather.\n" + output(family, PARIS))
    assert message["reasoning_content"] == "I need the weather."
    assert message["tool_calls"] == [{"name": "get_weather", "arguments": PARIS}]


@pytest.mark.parametrize("family", ["kimi_k3", "step3", "deepseek_v4", "qwen3_8", *OLDER])
def test_reasoning_opened_by_the_prompt(family: str) -> None:
    message = read(family, "Paris it is.\n" + output(family, PARIS), thinking_forced_open=True)
    assert message["reasoning_content"] == "Paris it is."
    assert message["tool_calls"] == [{"name": "get_weather", "arguments": PARIS}]


def test_qwen38_drops_the_think_close_after_calls_written_inside_reasoning() -> None:
    text = "<think>Weather first.\n" + output("qwen3_8", PARIS) + "\n</think>\n\nDone."
    message = read("qwen3_8", text)
    assert message["content"].strip() == "Done."
    assert len(message["tool_calls"]) == 1


def test_kimi_k3_reply_channel_markers_are_not_text() -> None:
    text = "<|open|>response<|sep|>On it.<|close|>response<|sep|>" + output("kimi_k3", PARIS)
    message = read("kimi_k3", text)
    assert message["content"] == "On it."


# What makes the output a call for sure: from its end on, a cut must not make it text.
CALL_STARTS = {
    "deepseek_v4": f"<{D}tool_calls>", "kimi_k3": "<|open|>tools<|sep|>", "hy3": "<tool_calls>",
    "step3": "<｜tool_calls_begin｜>", "minimax_m1": "<tool_calls>", "toolace": "get_weather(",
    "granite_20b_fc": "<function_call>", "qwen3_8": "<tool_call>", "hunyuan": "<tool_calls>",
    "hunyuan_7b": "<tool_calls>", "xlam": '[{"name": "get_weather",',
    "mistral_nemo": "[TOOL_CALLS]", "mistral_v03": "[TOOL_CALLS]", "mistral_v11": "[TOOL_CALLS]",
}  # fmt: skip


@pytest.mark.parametrize("family", FORMATS)
def test_output_cut_anywhere_inside_a_call_is_a_call_with_an_error(family: str) -> None:
    whole = output(family, PARIS)
    start = whole.index(CALL_STARTS[family]) + len(CALL_STARTS[family])
    for cut in range(start, len(whole)):
        message = read(family, whole[:cut])
        assert message["content"] == "", (cut, message)
        assert len(message["tool_calls"]) == 1, (cut, message)
        [call] = message["tool_calls"]
        if "error" in call:
            assert "cut off" in call["error"], (cut, message)
        else:
            # Only once every argument is written whole may the call stand without error.
            assert call["arguments"] == PARIS, (cut, message)


@pytest.mark.parametrize(
    ("model", "family"),
    [
        ("deepseek-ai/DeepSeek-V4-Flash", "deepseek_v4"),
        ("deepseek-ai/DeepSeek-V4.1", "deepseek_v4"),
        ("moonshotai/Kimi-K3", "kimi_k3"),
        ("Qwen/Qwen3.8-27B", "qwen3_8"),
        ("tencent/Hy3-preview", "hy3"),
        ("stepfun-ai/step3", "step3"),
        ("stepfun-ai/Step-3.5-Flash", "qwen3_coder"),
        ("MiniMaxAI/MiniMax-M1-40k", "minimax_m1"),
        ("Team-ACE/ToolACE-8B", "toolace"),
        ("ibm-granite/granite-20b-functioncalling", "granite_20b_fc"),
        ("ibm-granite/granite-3.3-8b-instruct", "granite"),
        ("Qwen/Qwen2.5-Coder-1.5B-Instruct", "hermes_2_pro"),
    ],
)
def test_detected_from_the_model_name(model: str, family: str) -> None:
    assert detect_family(None, model) == family


@pytest.mark.parametrize(
    ("template", "family"),
    [
        ("{{ '<｜Assistant｜>' }}{% if tools %}<｜DSML｜tool_calls>{% endif %}", "deepseek_v4"),
        ("{{ '<|open|>' + role + '<|sep|>' }}", "kimi_k3"),
        ("<tool_calls><tool_call>{{ name }}<tool_sep><arg_key>", "hy3"),
        ("<｜tool_call_begin｜>function<｜tool_sep｜><steptml:invoke name=", "step3"),
        ("<beginning_of_sentence>{{ role }}{% if tools %}<tool_calls>{% endif %}", "minimax_m1"),
        ("{{ '<｜Assistant｜>' }}<｜DSML｜function_calls>", "deepseek_v3_2"),
        # tests/corpora/llamacpp holds no template of any family of this file (nor Qwen3.8's,
        # which is told by its name: below); the lines above are each format's own tokens.
        # The lines that give each older family away in the templates vLLM ships for it
        # (examples/tool_chat_template_*.jinja; the models' own, the GGUF's, say the same).
        ("{{ 'SYSTEM: ' + sys_prompt }}\n<|function_call_library|>\n{{- tool.parameters|tojson }}",
         "granite_20b_fc"),
        ("{{- '<function_call> ' + tc|tojson }}{{- '<function_response> ' + message['content'] }}",
         "granite_20b_fc"),
        ("<|start_header_id|>ipython<|end_header_id|>\n\nyou MUST put it in the format of"
         " [func_name1(params_name1=params_value1, params_name2=params_value2...)]", "toolace"),
        ("<|im_start|>system\nYou have access to a set of tools. When using tools, make calls in"
         ' a single JSON array: \n\n[{"name": "tool_call_name", "arguments": {}}]', "xlam"),
        ("<|start_header_id|>ipython<|end_header_id|>\n\nWhen using tools, make calls in a"
         " single JSON array", "xlam"),
        ("<|startoftext|>{{ content }}<|extra_4|>\u7528\u6237\uff1a{{ content }}<|extra_0|>"
         '<tool_calls>[{"name": "func_name1"}]</tool_calls>', "hunyuan"),
        ("{{ '<beginning_of_sentence>ai name=MiniMax AI\\n<tool_calls>\\n' }}", "minimax_m1"),
        ("[AVAILABLE_TOOLS]{{ tools }}[/AVAILABLE_TOOLS][TOOL_CALLS]{{ content }}[TOOL_RESULTS]",
         "mistral_nemo"),
    ],
)  # fmt: skip
def test_detected_from_the_template(template: str, family: str) -> None:
    assert detect_family(template) == family


def test_qwen38_under_qwen35s_template_is_told_by_its_name() -> None:
    # No Qwen3.8 template is in the corpora; its calls are Qwen3.5's, so its template would
    # be taken for qwen3_coder, which does not read calls written inside <think>.
    qwen35 = CORPUS / "templates" / "autoparser" / "Qwen3.5-4B.jinja"
    template = qwen35.read_text(encoding="utf-8")
    assert detect_family(template) == "qwen3_coder"
    assert detect_family(template, "Qwen/Qwen3.8-27B") == "qwen3_8"
    assert detect_family(template, "Qwen/Qwen3.5-4B") == "qwen3_coder"


@pytest.mark.parametrize(
    ("alias", "family"),
    [("deepseek_v4.1", "deepseek_v4"), ("qwen3.8", "qwen3_8"), ("hy_v3", "hy3"),
     ("step_3", "step3"), ("any", "known_shapes"), ("granite_20b_functioncalling",
     "granite_20b_fc"), ("kimi-k3", "kimi_k3"), ("minimax-m1", "minimax_m1")],
)  # fmt: skip
def test_family_names_and_aliases_resolve(alias: str, family: str) -> None:
    assert resolve_family(alias) == family
