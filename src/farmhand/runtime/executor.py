"""Routes the model's tool calls to the toolsets that own them, and runs them."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from farmhand.errors import ToolError
from farmhand.messages import ToolCall, ToolResult
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.schema import normalize_schema, validate_arguments
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.wrappers import SEPARATOR


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

    async def list_tools(self) -> list[ToolDefinition]:
        if self._definitions is None:
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
        """The exposed name a call means: exact, or unique once the `server:` prefix is
        dropped (small models often leave it out)."""
        known = [*self._owner, *self._client_tools]
        if name in known:
            return name
        matches = [k for k in known if k.split(SEPARATOR, 1)[-1] == name]
        return matches[0] if len(matches) == 1 else None

    def is_client_tool(self, name: str) -> bool:
        return name in self._client_tools and name not in self._owner

    async def execute(self, call: ToolCall) -> ToolResult:
        """Run one call; every failure becomes an error result the model can read."""
        if call.parse_error:
            return ToolResult(call.id, call.name, f"Error: {call.parse_error}", is_error=True)
        name = self.resolve(call.name)
        if name is None or name not in self._owner:
            available = ", ".join(sorted([*self._owner, *self._client_tools])) or "none"
            return ToolResult(
                call.id,
                call.name,
                f"Error: there is no tool named {call.name!r}. Available tools: {available}",
                is_error=True,
            )
        try:
            output = await self._owner[name].call_tool(name, call.arguments)
        except ToolError as exc:
            return ToolResult(call.id, name, f"Error: {exc}", is_error=True)
        return ToolResult(call.id, name, output.text, is_error=output.is_error)


def _normalized(tool: ToolDefinition) -> ToolDefinition:
    """The tool with a schema every backend accepts ($refs inlined, null descriptions and
    python type names fixed): done once here, before any backend sees it."""
    parameters = normalize_schema(tool.parameters)
    return (
        tool if parameters == tool.parameters else dataclasses.replace(tool, parameters=parameters)
    )
