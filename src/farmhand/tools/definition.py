"""ToolDefinition: a tool as the model sees it, in OpenAI's function shape (canonical)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

EMPTY_OBJECT_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}

SEPARATOR = ":"
"""Between a tool's source and its own name: farmhand calls an MCP server's tool
`server:tool` (providers that refuse ":" in names get their own spelling)."""


@dataclass(frozen=True)
class ToolDefinition:
    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: dict(EMPTY_OBJECT_SCHEMA))
    # MCP's behaviour hints (readOnlyHint, destructiveHint, ...); never sent to a model.
    annotations: dict[str, Any] = field(default_factory=dict, compare=False)
    # OpenAI's strict mode: the backend must keep the arguments to the schema exactly.
    strict: bool | None = None

    @property
    def read_only(self) -> bool:
        return bool(self.annotations.get("readOnlyHint"))

    def to_openai(self) -> dict[str, Any]:
        """`{"type": "function", "function": {...}}`, as OpenAI's API and chat templates take it."""
        function: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters,
        }
        if self.strict is not None:
            function["strict"] = self.strict
        return {"type": "function", "function": function}

    @classmethod
    def from_openai(cls, tool: dict[str, Any]) -> ToolDefinition:
        """Accepts both `{"type": "function", "function": {...}}` and the flat form."""
        fn = tool.get("function", tool)
        return cls(
            name=fn["name"],
            description=fn.get("description") or "",
            parameters=fn.get("parameters") or dict(EMPTY_OBJECT_SCHEMA),
            strict=fn["strict"] if isinstance(fn.get("strict"), bool) else None,
        )


def resolve_tool_name(name: str, known: Sequence[str]) -> str | None:
    """The tool `name` means: exact, or unique once the `server:` prefix is dropped (small
    models, and people, often leave it out). The one rule for the router, the tool_choice
    check and the grammar a forced call is sampled under."""
    if name in known:
        return name
    matches = [k for k in known if k.split(SEPARATOR, 1)[-1] == name]
    return matches[0] if len(matches) == 1 else None
