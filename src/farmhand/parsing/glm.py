"""GLM 4.5 / 4.6 / 4.7 tool calls: the name, then a key tag and a value tag per argument.

    <tool_call>NAME
    <arg_key>KEY</arg_key>
    <arg_value>VALUE</arg_value>
    </tool_call>

Values are bare text, typed by the tool's schema; reasoning is `<think>...</think>`, and the
non-thinking prompt ends with a lone `</think>` (not part of the reply).
"""

from __future__ import annotations

from farmhand.parsing.xml_calls import XmlCallParser, XmlFormat

GLM = XmlFormat(
    block_open="<tool_call>",
    block_close="</tool_call>",
    call_open="",
    name_ends=("<arg_key>", "</tool_call>", "\n"),
    name_end_kept=True,
    call_close="",
    param_open="<arg_key>",
    key_end="</arg_key>",
    value_open="<arg_value>",
    param_close="</arg_value>",
)


class Glm45Parser(XmlCallParser):
    family = "glm_4_5"
    assistant_start = ("<|assistant|>",)
    xml = GLM
