"""Meituan LongCat tool calls, in LongCat's own tags. LongCat Flash Chat writes Hermes's JSON
call object in them; later models (Flash Lite, Flash Thinking) write GLM's key and value tags:

    <longcat_tool_call>{"name": "NAME", "arguments": {...}}</longcat_tool_call>
    <longcat_tool_call>NAME
    <longcat_arg_key>KEY</longcat_arg_key>
    <longcat_arg_value>VALUE</longcat_arg_value>
    </longcat_tool_call>

Both are read (the XML-ish reader takes a JSON object in a block); values are bare text,
typed by the tool's schema.
"""

from __future__ import annotations

from dataclasses import replace

from farmhand.parsing.glm import GLM
from farmhand.parsing.xml_calls import XmlCallParser

LONGCAT = replace(
    GLM,
    block_open="<longcat_tool_call>",
    block_close="</longcat_tool_call>",
    name_ends=("<longcat_arg_key>", "</longcat_tool_call>", "\n"),
    param_open="<longcat_arg_key>",
    key_end="</longcat_arg_key>",
    value_open="<longcat_arg_value>",
    param_close="</longcat_arg_value>",
)


class LongCatParser(XmlCallParser):
    family = "longcat"
    assistant_start = (" ASSISTANT:",)
    xml = LONGCAT
