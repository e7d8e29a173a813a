"""The hooks the code calls where requests, model turns and tool calls happen, and the
`Observer` that does nothing with them (the default everywhere: the CLI, the Python API,
a server with metrics and tracing off). `recorder.Recorder` is the one that records.

The hooks are passed down, never reached through a global:

    chat = observer.chat(model.name, model.provider)   # service.chat.run_chat
    with chat.turn() as turn:                          # runtime.loop, per model turn
        ... turn.finished(input_tokens, output_tokens, reason)
    with chat.tool_call(name, call.id, offered=True) as call:   # per tool call
        ... call.done("ok")
    with observer.hand_call(name, call.id, offered=True) as call:  # a call by hand
        ... call.done("ok")

A no-op watch is one shared object whose methods return at once, so the hot path pays a
method call per turn and per tool call when nothing is watched.
"""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from opentelemetry.trace import Tracer

    from farmhand.observability.metrics import DeploymentSource, FarmhandMetrics


class Watch:
    """A context manager that does nothing: the base of every watch."""

    def __enter__(self) -> Watch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


class TurnWatch(Watch):
    """One model turn. `finished` once its Finish event came (the turn may still fail
    after it, which the block's exit records)."""

    def __enter__(self) -> TurnWatch:
        return self

    def finished(self, input_tokens: int, output_tokens: int, reason: str) -> None:
        return None


class ToolWatch(Watch):
    """One tool call. `done` with its outcome: ok, error, held (an approval gate holds
    it), invalid (arguments that could not be read, a tool not offered)."""

    def __enter__(self) -> ToolWatch:
        return self

    def done(self, outcome: str) -> None:
        return None


class ChatWatch:
    """One chat with one model: its turns and tool calls."""

    def turn(self) -> TurnWatch:
        return NO_TURN

    def tool_call(self, name: str, call_id: str, *, offered: bool) -> ToolWatch:
        """`name` as the router resolved it (`server:tool`); `offered`: one of the tools
        this chat offers (else its name is the model's own text, never a label)."""
        return NO_TOOL


class Observer:
    """Watches nothing. `metrics` and `tracer` are None here; a `Recorder` has them."""

    metrics: FarmhandMetrics | None = None
    tracer: Tracer | None = None

    @property
    def active(self) -> bool:
        return self.metrics is not None or self.tracer is not None

    def chat(self, model: str, provider: str) -> ChatWatch:
        return NO_CHAT

    def hand_call(self, name: str, call_id: str, *, offered: bool) -> ToolWatch:
        """A tool call a person made by hand (the playground), without a model: counted
        with the loop's, told apart by its `caller` label."""
        return NO_TOOL

    def for_project(
        self, namespace: str, project: str, *, from_api: bool, servers: Iterable[str] | None = None
    ) -> Observer:
        """This observer for the chats of a project: the labels of its models and of its
        own MCP `servers` name the project (`from_api`: written through the API, a client's
        names, bounded)."""
        return self

    def watch_deployments(self, source: DeploymentSource) -> None:
        """Export the backend deployments `source` reports, when scraped (metrics)."""

    def mcp_restart(self, server: str, *, operators: bool = True) -> None:
        """An MCP server's session started again after one ended badly. `operators`: the
        server is one of the operator's config (else a request's or a project's, whose
        name may be any the client wrote: never labelled as the operator's)."""

    def mcp_timeout(self, server: str, *, operators: bool = True) -> None:
        """An MCP tool call was cancelled at its timeout (`operators` as for restarts)."""

    def embedded_wait(self, model: str, seconds: float) -> None:
        """A turn of `model` waited `seconds` for the embedded engine to admit it."""

    def close(self) -> None:
        """Flush and stop what the observer started (a trace exporter)."""


NO_TURN = TurnWatch()
NO_TOOL = ToolWatch()
NO_CHAT = ChatWatch()
NO_OBSERVER = Observer()
"""Stateless: shared by everything that watches nothing."""
