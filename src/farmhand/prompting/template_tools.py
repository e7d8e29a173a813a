"""What a chat template does with the tools it is given.

`renders_tools`: whether the template writes them into the prompt at all. It is asked the
way llama.cpp asks its templates: render a conversation with one sample tool and look for
the tool's name. A template that drops them (Phi-3.5's, Gemma's, a plain ChatML one) leaves
the model blind to its tools, so the embedded provider describes them itself
(`providers/llamacpp/generic_tools.py`).

`builtin_tools_of`: Llama 3.1's built-in tools. Its template announces `Environment:
ipython` and lists the built-in tools on a `Tools:` line when it is given `builtin_tools`
(their names), which llama.cpp passes when tools of those names are offered; so does
farmhand, to any template that reads the variable.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from farmhand.prompting.templates import render_template_dicts
from farmhand.tools.definition import ToolDefinition

BUILTIN_TOOLS = ("brave_search", "web_search", "wolfram_alpha", "code_interpreter", "python")
"""The names llama.cpp treats as Llama 3.x built-in tools (web_search is brave_search's
other name, python code_interpreter's)."""

_PROBE_NAME = "farmhand_sample_tool_q7"  # occurs in no template
_PROBE_TOOL = {
    "type": "function",
    "function": {
        "name": _PROBE_NAME,
        "description": "A sample tool.",
        "parameters": {"type": "object", "properties": {"x": {"type": "string"}}},
    },
}


@lru_cache(maxsize=16)
def renders_tools(template: str) -> bool:
    """Whether `template` writes the tools it is given into the prompt. A template that
    fails on the sample counts as one that does: farmhand cannot tell, and leaves it be
    (its error shows on the first real turn)."""
    user = {"role": "user", "content": "U"}
    # Some templates refuse a system message (Gemma 2's), a few want one.
    for messages in ([user], [{"role": "system", "content": "S"}, user]):
        try:
            rendered = render_template_dicts(template, messages, [_PROBE_TOOL])
        except Exception:  # a template is code: any failure of it means "cannot tell"
            continue
        return _PROBE_NAME in rendered
    return True


def builtin_tools_of(template: str, tools: Sequence[ToolDefinition]) -> list[str]:
    """The offered tools `template` is to be told are built in (`builtin_tools`): those
    with a built-in tool's name, for a template that reads the variable; else []."""
    if "builtin_tools" not in template:
        return []
    return [t.name for t in tools if t.name in BUILTIN_TOOLS]
