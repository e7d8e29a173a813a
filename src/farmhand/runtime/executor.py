"""Routes the model's tool calls to the toolsets that own them, and runs them."""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Sequence
from typing import NamedTuple

from farmhand.errors import ToolError, UnknownToolError
from farmhand.messages import Message, ToolCall, ToolResult
from farmhand.tools.choice import ToolChoice
from farmhand.tools.definition import SEPARATOR, ToolDefinition, resolve_tool_name
from farmhand.tools.schema import normalize_schema, validate_arguments
from farmhand.toolsets.base import ConversationAware, Toolset
from farmhand.toolsets.mcp.approval import ApprovalRequired

log = logging.getLogger(__name__)


class Outcome(NamedTuple):
    """One call's result as the model sees it, and as the tool returned it (the two differ
    when the result was cut to the size budget)."""

    result: ToolResult
    full: ToolResult
    offers_tools: bool = False
    """The tool only made other tools available (`ToolOutput.offers_tools`)."""
    held: bool = False
    """The call did not run: an approval gate holds it for the caller (`ApprovalRequired`);
    `result` is a placeholder the model never sees."""


class ToolRouter:
    """All tools the model may call this conversation, by the names the model sees.

    `client_tools` are tools farmhand cannot run (inline tools from a config or a request):
    calls to them are handed back to the caller.
    """

    def __init__(
        self, toolsets: Sequence[Toolset] = (), client_tools: Sequence[ToolDefinition] = ()
    ) -> None:
        self._toolsets = list(toolsets)
        self._client_tools = {t.name: t for t in client_tools}
        self._owner: dict[str, Toolset] = {}
        self._definitions: list[ToolDefinition] | None = None
        self._by_name: dict[str, ToolDefinition] = {}

    async def list_tools(self, *, refresh: bool = False) -> list[ToolDefinition]:
        """The tools to offer the model. `refresh` lists the toolsets again: the loop does it
        every turn, so tools a toolset adds mid-conversation (JIT discovery) are offered."""
        if self._definitions is None or refresh:
            self._owner = {}
            definitions: list[ToolDefinition] = []
            for toolset in self._toolsets:
                for tool in await toolset.list_tools():
                    if tool.name in self._owner:
                        continue  # first toolset wins; prefixes keep servers apart
                    self._owner[tool.name] = toolset
                    definitions.append(_normalized(tool))
            for name, tool in self._client_tools.items():
                if name not in self._owner:
                    definitions.append(_normalized(tool))
            self._definitions = definitions
            self._by_name = {t.name: t for t in definitions}
        return self._definitions

    def check(self, call: ToolCall) -> ToolCall:
        """The call with its exposed name; if its arguments do not fit the tool's schema,
        marked with an error that says which field is wrong, so it is never run."""
        name = self.resolve(call.name) or call.name
        if name != call.name:
            call = dataclasses.replace(call, name=name)
        definition = self._by_name.get(name)
        if call.parse_error or definition is None:
            return call
        problem = validate_arguments(definition, call.arguments)
        if problem is None:
            return call
        return dataclasses.replace(call, parse_error=f"invalid arguments for {name}: {problem}")

    def resolve(self, name: str) -> str | None:
        """The exposed name a call means (see `resolve_tool_name`)."""
        return resolve_tool_name(name, [*self._owner, *self._client_tools])

    async def resolve_choice(self, choice: ToolChoice, *, jit: bool = False) -> ToolChoice:
        """`choice` with a named tool under its exposed name (`server:tool`), as a call's
        name is resolved. UnknownToolError when it names no tool offered, or requires a call
        when there are no tools. With JIT discovery tools appear later, so a name is kept
        as given."""
        names = [t.name for t in await self.list_tools()]
        if choice.mode == "required" and not names and not jit:
            raise UnknownToolError("tool_choice required, but no tools are offered")
        if choice.name is None or jit:
            return choice
        resolved = resolve_tool_name(choice.name, names)
        if resolved is None:
            listing = ", ".join(names) or "none"
            raise UnknownToolError(
                f"tool_choice names {choice.name!r}, which is not one of the tools offered:"
                f" {listing}"
            )
        return ToolChoice.tool(resolved)

    def runs(self, name: str) -> bool:
        """Whether `name` (as `check` resolved it) is a tool of one of the toolsets."""
        return name in self._owner

    def is_client_tool(self, name: str) -> bool:
        return name in self._client_tools and name not in self._owner

    def note_conversation(self, messages: Sequence[Message]) -> None:
        """Let toolsets that rank or choose tools by the conversation (JIT discovery) see it."""
        for toolset in self._toolsets:
            if isinstance(toolset, ConversationAware):
                toolset.note_conversation(messages)

    def serial_lane(self, call: ToolCall) -> str | None:
        """None when the call may run beside any other; else the name of the lane (its
        server) in which it must wait for the calls before it.

        MCP has no "safe to call concurrently" hint, so readOnlyHint stands in for it: a
        tool that changes nothing cannot race with another call. Every other call to the
        same server runs in the order the model wrote it (a write then a read of one file
        must not swap), while different servers still run side by side.
        """
        name = self.resolve(call.name) or call.name
        definition = self._by_name.get(name)
        if call.parse_error or definition is None or definition.read_only:
            return None
        return name.split(SEPARATOR, 1)[0] if SEPARATOR in name else name

    async def execute_full(self, call: ToolCall) -> Outcome:
        """Run one call; every failure becomes an error result the model can read. The
        outcome holds the result as the model gets it and at full length."""
        if call.parse_error:
            return _same(ToolResult(call.id, call.name, f"Error: {call.parse_error}", True))
        name = self.resolve(call.name)
        if name is None or name not in self._owner:
            available = ", ".join(sorted([*self._owner, *self._client_tools])) or "none"
            return _same(
                ToolResult(
                    call.id,
                    call.name,
                    f"Error: there is no tool named {call.name!r}. Available tools: {available}",
                    is_error=True,
                )
            )
        started = time.perf_counter()
        try:
            output = await self._owner[name].call_tool(name, call.arguments)
        except ToolError as exc:
            log.debug("tool call %s failed (%s) after %.0f ms", name, exc, _ms(started))
            return _same(ToolResult(call.id, name, f"Error: {exc}", is_error=True))
        except ApprovalRequired as held:
            log.debug("tool call %s held for approval", name)
            placeholder = ToolResult(call.id, name, str(held), is_error=True)
            return Outcome(placeholder, placeholder, held=True)
        log.debug(
            "tool call %s: %s in %.0f ms, %d characters",
            name,
            "error" if output.is_error else "ok",
            _ms(started),
            len(output.full_text or output.text),
        )
        result = ToolResult(call.id, name, output.text, is_error=output.is_error)
        full = (
            result
            if output.full_text is None or output.full_text == output.text
            else dataclasses.replace(result, content=output.full_text)
        )
        return Outcome(result, full, output.offers_tools)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def _same(result: ToolResult) -> Outcome:
    return Outcome(result, result)


def _normalized(tool: ToolDefinition) -> ToolDefinition:
    """The tool with a schema every backend accepts ($refs inlined, null descriptions and
    python type names fixed): done once here, before any backend sees it."""
    parameters = normalize_schema(tool.parameters)
    return (
        tool if parameters == tool.parameters else dataclasses.replace(tool, parameters=parameters)
    )
