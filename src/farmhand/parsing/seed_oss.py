"""ByteDance Seed-OSS tool calls: Qwen3-Coder's tags inside `<seed:tool_call>`, reasoning in
`<seed:think>...</seed:think>`:

    <seed:tool_call>
    <function=NAME>
    <parameter=KEY>VALUE</parameter>
    </function>
    </seed:tool_call>
"""

from __future__ import annotations

from dataclasses import replace

from farmhand.parsing.qwen3_coder import QWEN3_CODER
from farmhand.parsing.xml_calls import XmlCallParser

# Seed writes each value inline (`<parameter=KEY>VALUE</parameter>`): every newline is the value's.
SEED_OSS = replace(
    QWEN3_CODER,
    block_open="<seed:tool_call>",
    block_close="</seed:tool_call>",
    newline_framed=False,
)


class SeedOssParser(XmlCallParser):
    family = "seed_oss"
    assistant_start = ("<seed:bos>assistant\n",)
    think_open = "<seed:think>"
    think_close = "</seed:think>"
    xml = SEED_OSS
