"""How tools are presented to a small model: a few plain rules in the system prompt.

Small models read a tool list as an instruction to call something. The rules say when not
to call, that a request for several things takes several calls in one turn, and that tool
results are to be answered from. They go into the system prompt (ahead of the tool
definitions the chat template appends; `prompt_based.with_tools_block` puts them there), so
the KV prefix cache keeps them with the tools.
"""

from __future__ import annotations

TOOL_RULES = (
    "Rules for tools:\n"
    "- Call a tool only if the user's request needs one of the tools below; otherwise answer"
    " directly in plain text.\n"
    "- If the request asks for several things, make one call for each of them, all in this"
    " reply.\n"
    "- Once tool results are in the conversation, answer the user from them in plain text;"
    " call a tool again only if the results say something is missing."
)
