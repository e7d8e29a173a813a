"""Who a server's question is for: the asker of the tool call in flight on its connection.

The protocol does not say which call a server's `elicitation/create` belongs to (over stdio
it cannot), and a pooled connection serves many conversations. So each call registers its
asker while it runs; a question goes to the asker of the calls in flight when they agree, to
the connection's default asker when nothing is in flight, and is refused when calls of
different askers (different conversations) are in flight at once.

While the user thinks, the calls' timeouts stand still: the time spent answering is not the
tool's.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import anyio
from mcp import types
from mcp.client.session import ClientRequestContext

from farmhand.toolsets.mcp.elicitation import (
    Answer,
    Asker,
    Refusal,
    elicit_result,
    question_for,
)

log = logging.getLogger(__name__)


@dataclass(eq=False)
class Caller:
    """One tool call in flight: its tool, its asker, and the scope its timeout lives in."""

    tool: str
    asker: Asker
    scope: anyio.CancelScope


class ServerCallers:
    """The calls in flight on one server's connection, and the answer to its questions."""

    def __init__(self, server: str, default: Asker) -> None:
        self.server = server
        self.default = default
        self._calls: list[Caller] = []

    @contextmanager
    def calling(self, tool: str, asker: Asker | None, scope: anyio.CancelScope) -> Iterator[Caller]:
        """Register a call for as long as it runs; `asker` None means the default."""
        caller = Caller(tool, asker or self.default, scope)
        self._calls.append(caller)
        try:
            yield caller
        finally:
            self._calls.remove(caller)

    async def elicit(
        self, context: ClientRequestContext, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        """The SDK's elicitation callback."""
        calls = list(self._calls)
        askers = {id(c.asker): c.asker for c in calls}
        if len(askers) > 1:
            asker: Asker = Refusal(
                f"{len(calls)} calls from different conversations are running on server"
                f" {self.server!r} at once, and farmhand cannot tell which one asks"
            )
        else:
            asker = next(iter(askers.values()), self.default)
        tools = {c.tool for c in calls}
        question = question_for(self.server, params, tools.pop() if len(tools) == 1 else None)
        with paused(calls):
            try:
                answer = await asker(question)
            except Exception as exc:  # an asker that broke must not hang the server
                log.warning("MCP server %s: answering its question failed: %s", self.server, exc)
                answer = Answer.decline(f"asking failed ({exc})")
        if answer.reason:
            log.info("MCP server %s asked %r: %s", self.server, question.message, answer.reason)
        return elicit_result(question, answer)


@contextmanager
def paused(calls: list[Caller]) -> Iterator[None]:
    """Stop the calls' timeouts while the user answers; each resumes with what it had left."""
    now = anyio.current_time()
    left = [(c.scope, c.scope.deadline - now) for c in calls]
    for scope, _ in left:
        scope.deadline = math.inf
    try:
        yield
    finally:
        now = anyio.current_time()
        for scope, remaining in left:
            scope.deadline = now + remaining if math.isfinite(remaining) else math.inf
