"""farmhand as a Python library: a model that calls tools, from your own program.

    import asyncio

    import farmhand


    def shipping_days(country: str) -> int:
        \"\"\"How many days a parcel takes to reach `country`.\"\"\"
        return 2 if country == "NO" else 5


    async def main() -> None:
        async with farmhand.Runtime() as rt:  # no config file: the embedded default model
            answer = await rt.chat("What is in these notes?", tools=["./notes"])
            print(answer.text)
            answer = await rt.chat("How long to Norway?", tools=[shipping_days])
            async for event in rt.stream("And to Chile?", tools=[shipping_days]):
                if isinstance(event, farmhand.TextChunk):
                    print(event.text, end="")
            summary = await rt.eval("builtin")
            print(f"{summary.mean_accuracy:.0%}")


    asyncio.run(main())

`Runtime(config)` opens from a farmhand.yaml (a path), a `FarmhandConfig`, or none; the
config's models, MCP servers, prompts and limits apply as they do in `farmhand serve`.
`tools=` takes paths (the servers `farmhand run --tools PATH` starts: the folder read-only,
git where it has .git), MCP servers (`farmhand.McpServer(name=..., command=...)`) and
plain Python functions (the signature is the tool's schema, the docstring its
description). What the package's modules hold besides these names is internal and may
change; docs/python.md describes this API.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__all__ = [
    "Answer",
    "ConfigError",
    "FarmhandConfig",
    "FarmhandError",
    "InputRequested",
    "LoopEvent",
    "LoopFinished",
    "McpServer",
    "Message",
    "ReasoningChunk",
    "Runtime",
    "TargetSummary",
    "TextChunk",
    "ToolCall",
    "ToolCallFinished",
    "ToolCallRecord",
    "ToolCallStarted",
    "ToolResult",
    "TurnStarted",
    "Usage",
]

if TYPE_CHECKING:
    from farmhand.api import Answer, Runtime
    from farmhand.config.models import FarmhandConfig
    from farmhand.config.models import McpServerConfig as McpServer
    from farmhand.errors import ConfigError, FarmhandError
    from farmhand.eval.scoring import TargetSummary
    from farmhand.messages import Message, ToolCall, ToolResult, Usage
    from farmhand.runtime.events import (
        InputRequested,
        LoopEvent,
        LoopFinished,
        ReasoningChunk,
        TextChunk,
        ToolCallFinished,
        ToolCallRecord,
        ToolCallStarted,
        TurnStarted,
    )

# Where each name lives, imported on first use: `import farmhand.x` (every command, every
# server start) runs this file, and should not load the service for it.
_HOMES = {
    "Answer": "farmhand.api",
    "Runtime": "farmhand.api",
    "FarmhandConfig": "farmhand.config.models",
    "McpServer": "farmhand.config.models",
    "ConfigError": "farmhand.errors",
    "FarmhandError": "farmhand.errors",
    "TargetSummary": "farmhand.eval.scoring",
    "Message": "farmhand.messages",
    "ToolCall": "farmhand.messages",
    "ToolResult": "farmhand.messages",
    "Usage": "farmhand.messages",
}
_ALIASES = {"McpServer": "McpServerConfig"}


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'farmhand' has no attribute {name!r}")
    import importlib

    module = importlib.import_module(_HOMES.get(name, "farmhand.runtime.events"))
    value = getattr(module, _ALIASES.get(name, name))
    globals()[name] = value  # once: later lookups do not come here
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
