"""Tencent Hy3 tool calls: GLM-like key and value tags, the name ended by `<tool_sep>`.

    <tool_calls><tool_call>NAME<tool_sep>
    <arg_key>KEY</arg_key>
    <arg_value>VALUE</arg_value>
    </tool_call></tool_calls>

Source: vLLM's HYV3ToolParser and HYV3ReasoningParser. Values are bare text, typed by the
tool's schema; reasoning, when the request asks for it, is `<think>...</think>`.
(Hunyuan A13B, the earlier generation, writes `<tool_call>NAME` and a fenced JSON body: the
`hunyuan` family.)
"""

from __future__ import annotations

from farmhand.parsing.xml_calls import XmlCallParser, XmlFormat

BLOCK_OPEN = "<tool_calls>"
HY3 = XmlFormat(
    block_open=BLOCK_OPEN,
    block_close="</tool_calls>",
    call_open="<tool_call>",
    name_ends=("<tool_sep>",),
    call_close="</tool_call>",
    param_open="<arg_key>",
    key_end="</arg_key>",
    value_open="<arg_value>",
    param_close="</arg_value>",
)


class Hy3Parser(XmlCallParser):
    family = "hy3"
    think_interrupts = (BLOCK_OPEN,)
    xml = HY3
