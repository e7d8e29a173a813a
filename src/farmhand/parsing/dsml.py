"""DeepSeek V3.2 tool calls, in its DSML tags:

    <｜DSML｜function_calls>
    <｜DSML｜invoke name="NAME">
    <｜DSML｜parameter name="KEY" string="true">VALUE</｜DSML｜parameter>
    </｜DSML｜invoke>
    </｜DSML｜function_calls>

Each parameter says whether its value is a string (`string="true"`: the text as written) or
JSON (`string="false"`). Reasoning is `<think>...</think>`; the non-thinking prompt ends with
`<think></think>`.
"""

from __future__ import annotations

from farmhand.parsing.xml_calls import XmlCallParser, XmlFormat

DSML = "｜DSML｜"
DEEPSEEK_V3_2 = XmlFormat(
    block_open=f"<{DSML}function_calls>",
    block_close=f"</{DSML}function_calls>",
    call_open=f"<{DSML}invoke name=",
    name_ends=(">",),
    call_close=f"</{DSML}invoke>",
    param_open=f'<{DSML}parameter name="',
    key_end='"',
    head_end=">",
    param_close=f"</{DSML}parameter>",
)


class DeepSeekV32Parser(XmlCallParser):
    family = "deepseek_v3_2"
    assistant_start = ("<｜Assistant｜>",)
    xml = DEEPSEEK_V3_2
