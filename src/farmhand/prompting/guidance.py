"""How tools are presented to a small model: rules in the system prompt, and results to
answer from.

Small models read a tool list as an instruction to call something. The rules say when not
to call, that a request for several things takes several calls in one turn, and that tool
results are to be answered from. They go into the system prompt (ahead of the tool
definitions the chat template appends; `prompt_based.with_tools_block` puts them there), so
the KV prefix cache keeps them with the tools.

After tool results, a small model shown its own calls writes them again (`make chat` once
made six listing calls in its second round). `answer_turn` presents the question and its
results as one plain message instead, for a turn that should answer. A result that asks for
more keeps the turn open for another call (`results_to_answer`): one that reports an error,
or one that names another tool offered this turn (JIT discovery answers "these tools are now
available; call them directly": the question is not answered until one of them is called).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence

from farmhand.messages import Message

TOOL_RULES = (
    "Rules for tools:\n"
    "- Call a tool only if the user's request needs one of the tools below; otherwise answer"
    " directly in plain text.\n"
    "- If the request asks for several things, make one call for each of them, all in this"
    " reply.\n"
    "- Once tool results are in the conversation, answer the user from them in plain text;"
    " call a tool again only if the results say something is missing."
)

# Tool results that ask the model to call again: flagged as errors by the tool, or (in a
# history sent by a client, which carries no flag) starting as farmhand's own errors do.
ERROR_STARTS = ("Error", "Invalid arguments for")
ANSWER_HEADER = "Results of the tools called for this question:"
ANSWER_FOOTER = "Using these results, answer the question in plain text. Do not call tools."


def results_to_answer(messages: Sequence[Message], offered: Collection[str] = ()) -> bool:
    """Whether the turn follows tool results that all succeeded: the model should answer.

    A result that reports an error, or that names a tool in `offered` (the names of this
    turn's tools) other than its own, asks for another call, and the turn stays open."""
    tail: list[Message] = []
    for message in reversed(messages):
        if message.role != "tool":
            break
        tail.append(message)
    return bool(tail) and not any(_asks_for_more(m, offered) for m in tail)


def _asks_for_more(result: Message, offered: Collection[str]) -> bool:
    if result.is_error or result.content.lstrip().startswith(ERROR_STARTS):
        return True
    others = [name for name in offered if name != result.name]
    return any(_names(result.content, name) for name in others)


def _names(text: str, tool: str) -> bool:
    """Whether `text` names `tool` as a whole word (not inside a longer name or path)."""
    return re.search(rf"(?<![\w:/.-]){re.escape(tool)}(?![\w/-])", text) is not None


def answer_turn(messages: Sequence[Message]) -> list[Message]:
    """The conversation with its last question and that question's results as one plain user
    message, the calls out of sight: shown their own calls, small models call again."""
    asked = max((i for i, m in enumerate(messages) if m.role == "user"), default=None)
    if asked is None:
        return list(messages)
    results = [
        f"[{m.name or 'tool'}]\n{m.content}" for m in messages[asked + 1 :] if m.role == "tool"
    ]
    text = "\n\n".join([messages[asked].content, ANSWER_HEADER, *results, ANSWER_FOOTER])
    return [*messages[:asked], Message.user(text)]
