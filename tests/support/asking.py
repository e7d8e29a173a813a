"""The asking test server, and askers that answer as a test script says."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from farmhand.config.models import McpServerConfig
from farmhand.toolsets.mcp.elicitation import Answer, Question

ASKING = str(Path(__file__).parents[1] / "toolsets" / "mcp" / "servers" / "asking_server.py")


def asking(name: str = "asking", **settings: Any) -> McpServerConfig:
    return McpServerConfig.model_validate(
        {"name": name, "command": sys.executable, "args": [ASKING], **settings}
    )


class Scripted:
    """An asker that records each question and answers with `reply(question)`."""

    def __init__(self, reply: Callable[[Question], Answer | Awaitable[Answer]]) -> None:
        self.reply = reply
        self.questions: list[Question] = []

    async def __call__(self, question: Question) -> Answer:
        self.questions.append(question)
        answer = self.reply(question)
        return answer if isinstance(answer, Answer) else await answer
