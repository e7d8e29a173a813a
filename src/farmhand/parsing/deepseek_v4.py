"""DeepSeek V4 and V4.1 tool calls: V3.2's DSML invokes in a block renamed `tool_calls`.

    <｜DSML｜tool_calls>
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="KEY" string="true">VALUE</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜tool_calls>

Source: vLLM's DeepSeekV4ToolParser (V3.2's DSML grammar with the block renamed) and its
DeepSeekV4ReasoningParser: reasoning is `<think>...</think>`, and the model may start its
calls right after reasoning without closing it, so the block's tag ends reasoning too.
"""

from __future__ import annotations

from dataclasses import replace

from farmhand.parsing.dsml import DEEPSEEK_V3_2, DSML
from farmhand.parsing.xml_calls import XmlCallParser

BLOCK_OPEN = f"<{DSML}tool_calls>"
DEEPSEEK_V4 = replace(DEEPSEEK_V3_2, block_open=BLOCK_OPEN, block_close=f"</{DSML}tool_calls>")


class DeepSeekV4Parser(XmlCallParser):
    family = "deepseek_v4"
    assistant_start = ("<｜Assistant｜>",)
    think_interrupts = (BLOCK_OPEN,)
    xml = DEEPSEEK_V4
