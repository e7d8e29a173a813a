"""A well-formed output of every family in the registry: text, reasoning where the family
has it, and calls with arguments, written from each family's format. The property tests
damage them, and every family is checked to stream their calls
(test_streaming_every_family); a family added to the registry without one here fails there."""

from __future__ import annotations

D = "\uff5cDSML\uff5c"

WELL_FORMED = {
    "lfm2": '<think>plan</think>ok<|tool_call_start|>[f(a=1, b="x y"), g()]<|tool_call_end|>',
    "llama4_pythonic": '[f(a=1, b="x"), g()]',
    "gemma4": '<|channel>thought\np<channel|><|tool_call>call:f{a:<|"|>x y<|"|>}<tool_call|>',
    "function_gemma": "<start_function_call>call:f{a:<escape>x<escape>}<end_function_call>",
    "gemma": '{"tool_calls": [{"name": "f", "arguments": {"a": 1}}]}',
    "reka": '<think>plan</think><tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
    "magistral": '[THINK]plan[/THINK]ok[TOOL_CALLS]f[CALL_ID]1[ARGS]{"v": [1, "x"]}',
    "command_r_plus": 'ok\nAction:\n```json\n[{"tool_name": "f", "parameters": {"a": 1}}]\n```',
    "minicpm": '<function name="f"><param name="k"><![CDATA[a<b]]></param></function>ok',
    "granite": '<think>p</think><response>ok</response><|tool_call|>[{"name":"f","arguments":{}}]',
    "granite4": '<tool_call>\n{"name": "f", "arguments": {"a": 1}}\n</tool_call>',
    "gigachat": 'ok<|message_sep|>\n\nfunction call<|role_sep|>\n{"name": "f", "arguments": {}}',
    "apriel": 'plan[BEGIN FINAL RESPONSE]<tool_calls>[{"name": "f", "arguments": {}}]</tool_calls>',
    "apertus": '<|inner_prefix|>p<|inner_suffix|><|tools_prefix|>[{"f": {"a": 1}}]<|tools_suffix|>',
    "phi4_mini": 'ok functools[{"name": "f", "arguments": {"a": [1, 2]}}]',
    "internlm": 'ok<|action_start|><|plugin|>\n{"name": "f", "parameters": {}}<|action_end|>',
    "jamba": 'ok<tool_calls>[{"name": "f", "arguments": {"a": "x"}}]</tool_calls>',
    "ernie4_5": 'plan</think><tool_call>\n{"name": "f", "arguments": {}}\n</tool_call>',
    # issue 28
    "deepseek_v4": (
        f'<think>p</think>ok<{D}tool_calls>\n<{D}invoke name="f">\n'
        f'<{D}parameter name="a" string="true">x y</{D}parameter>\n</{D}invoke>\n</{D}tool_calls>'
    ),
    "kimi_k3": (
        "<|open|>think<|sep|>p<|close|>think<|sep|><|open|>response<|sep|>ok<|close|>response"
        '<|sep|><|open|>tools<|sep|><|open|>call tool="f" index="1"<|sep|><|open|>argument'
        ' key="a" type="string"<|sep|>x y<|close|>argument<|sep|><|open|>argument key="b"'
        ' type="object"<|sep|>{"c": [1]}<|close|>argument<|sep|><|close|>call<|sep|>'
        "<|close|>tools<|sep|>"
    ),
    "hy3": (
        "<think>p</think>ok<tool_calls><tool_call>f<tool_sep><arg_key>a</arg_key><arg_value>"
        "x y</arg_value></tool_call></tool_calls>"
    ),
    "step3": (
        "ok<\uff5ctool_calls_begin\uff5c><\uff5ctool_call_begin\uff5c>function<\uff5ctool_sep\uff5c>"
        '<steptml:invoke name="f"><steptml:parameter name="a">x y</steptml:parameter>'
        "</steptml:invoke><\uff5ctool_call_end\uff5c><\uff5ctool_calls_end\uff5c>"
    ),
    "minimax_m1": '<think>p</think>ok<tool_calls>\n{"name": "f", "arguments": {"a": "x"}}\n'
    '{"name": "g", "arguments": {}}\n</tool_calls>',
    "toolace": '[f(a="x y", b=[1, 2]), g()]',
    "granite_20b_fc": 'ok <function_call> {"name": "f", "arguments": {"a": "x"}}',
    "known_shapes": 'I will.\n```json\n{"name": "f", "arguments": {"a": "x"}}\n```',
    "hermes_2_pro": '<tools>\n{"name": "f", "arguments": {"a": "x"}}\n</tools>',
    "qwen3_8": "<think>p\n<tool_call>\n<function=f>\n<parameter=a>\nx y\n</parameter>\n"
    "</function>\n</tool_call>",
    # The older families.
    "llama3_x": '{"name": "f", "parameters": {"a": "x y", "b": 1}}',
    "llama3_x_builtin_tools": '<|python_tag|>{"name": "f", "parameters": {"a": "x y"}}',
    "mistral_nemo": ('[TOOL_CALLS][{"name": "f", "arguments": {"a": "x y"}, "id": "123456789"}]'),
    "functionary_v3_1_llama3_1": 'ok<function=f>{"a": "x y", "b": [1]}</function>',
    "functionary_v3_2": 'all\nok\n>>>f\n{"a": "x y"}\n',
    "firefunction_v2": 'ok functools[{"name": "f", "arguments": {"a": "x y"}}]',
    "command_r7b": (
        '<|START_THINKING|>p<|END_THINKING|><|START_ACTION|>[\n    {"tool_cal'
        'l_id": "0", "tool_name": "f", "parameters": {"a": "x y"}'
        "}\n]<|END_ACTION|>"
    ),
    "deepseek_r1": (
        "<think>p</think>\n\n<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜"
        'tool▁sep｜>f\n```json\n{"a": "x y"}\n```<｜tool▁call▁end｜><｜tool▁ca'
        "lls▁end｜>"
    ),
    "generic": '{"tool_call": {"name": "f", "arguments": {"a": "x y"}}}',
    "qwen3_coder": (
        "ok<tool_call>\n<function=f>\n<parameter=a>\nx y\n</parameter>\n</function>\n</tool_call>"
    ),
    "seed_oss": (
        "<seed:tool_call>\n<function=f>\n<parameter=a>x y</parameter>\n</funct"
        "ion>\n</seed:tool_call>"
    ),
    "gpt_oss": (
        "<|channel|>analysis<|message|>p<|end|><|start|>assistant<|channel|>co"
        'mmentary to=functions.f <|constrain|>json<|message|>{"a": "x y"}<'
        "|call|>"
    ),
    "glm_4_5": ("ok<tool_call>f\n<arg_key>a</arg_key>\n<arg_value>x y</arg_value>\n</tool_call>"),
    "minimax_m2": (
        '<minimax:tool_call><invoke name="f"><parameter name="a">x y</para'
        "meter></invoke></minimax:tool_call>"
    ),
    "deepseek_v3_2": (
        'ok<｜DSML｜function_calls>\n<｜DSML｜invoke name="f">\n<｜DSML｜parameter'
        ' name="a" string="true">x y</｜DSML｜parameter>\n</｜DSML｜invoke>\n<'
        "/｜DSML｜function_calls>"
    ),
    "kimi_k2": (
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.f:0<|tool_ca"
        'll_argument_begin|>{"a": "x y"}<|tool_call_end|><|tool_calls_sect'
        "ion_end|>"
    ),
    "deepseek_v3_1": (
        '<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>f<｜tool▁sep｜>{"a": "x y"}<'
        "｜tool▁call▁end｜><｜tool▁calls▁end｜>"
    ),
    "nemotron_v2": ('<TOOLCALL>[{"name": "f", "arguments": {"a": "x y"}}]</TOOLCALL>'),
    "olmo3": '<function_calls>\nf(a="x y", b=1)\n</function_calls>',
    "xlam": ('[{"name": "f", "arguments": {"a": "x y"}}, {"name": "g", "arguments": {}}]'),
    "hunyuan": (
        '<think>p</think><tool_calls>[{"name": "f", "arguments": {"a": "x y"}}]</tool_calls>'
    ),
    "longcat": (
        "<longcat_tool_call>f\n<longcat_arg_key>a</longcat_arg_key>\n<longcat_"
        "arg_value>x y</longcat_arg_value>\n</longcat_tool_call>"
    ),
    "auto": ('{"tool_calls": [{"name": "f", "arguments": {"a": "x y"}}]}'),
}
