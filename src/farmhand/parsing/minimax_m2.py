"""MiniMax M2 tool calls: invokes inside one `<minimax:tool_call>` block.

    <minimax:tool_call>
    <invoke name="NAME">
    <parameter name="KEY">VALUE</parameter>
    </invoke>
    </minimax:tool_call>

Values are bare text, typed by the tool's schema; reasoning is `<think>...</think>`.
"""

from __future__ import annotations

from farmhand.parsing.xml_calls import XmlCallParser, XmlFormat

MINIMAX_M2 = XmlFormat(
    block_open="<minimax:tool_call>",
    block_close="</minimax:tool_call>",
    call_open="<invoke name=",
    name_ends=(">",),
    call_close="</invoke>",
    param_open="<parameter name=",
    key_end=">",
    param_close="</parameter>",
)


class MiniMaxM2Parser(XmlCallParser):
    family = "minimax_m2"
    assistant_start = ("]~b]ai\n",)
    xml = MINIMAX_M2
