"""Plain Python functions as tools (the Python API's `tools=[my_function]`).

Each function is offered under its own name, its docstring as the description and its
signature as the parameters' JSON Schema (pydantic reads the annotations); a call's
arguments are checked against the signature before the function runs. A sync function runs
in a worker thread, so a slow one does not hold the event loop; an async one is awaited.
What it returns is the tool's result: a string as it is, anything else as JSON. A wrong
argument or an exception it raises is a tool error the model reads, naming what went wrong.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Sequence
from typing import Any

import anyio
from pydantic import TypeAdapter, ValidationError
from pydantic_core import to_jsonable_python

from farmhand.errors import ConfigError
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import ToolOutput


class FunctionToolset:
    """`functions` as tools; ConfigError for one that cannot be one (a lambda, two of one
    name, a signature pydantic cannot describe)."""

    def __init__(self, functions: Sequence[Callable[..., Any]]) -> None:
        self._tools: dict[str, tuple[ToolDefinition, TypeAdapter[Any], bool]] = {}
        for function in functions:
            name = getattr(function, "__name__", "")
            if not name.isidentifier():
                raise ConfigError(
                    f"tool {function!r}: a function used as a tool needs a name (def, not lambda)"
                )
            if name in self._tools:
                raise ConfigError(f"two tools are called {name!r}; rename one")
            try:
                adapter: TypeAdapter[Any] = TypeAdapter(function)  # type: ignore[arg-type]
                schema = adapter.json_schema()
            except Exception as exc:  # pydantic's own errors say which annotation
                raise ConfigError(f"tool {name!r}: cannot describe its parameters: {exc}") from None
            description = inspect.getdoc(function) or ""
            definition = ToolDefinition(name, description, schema)
            self._tools[name] = (definition, adapter, inspect.iscoroutinefunction(function))

    async def list_tools(self) -> list[ToolDefinition]:
        return [definition for definition, _, _ in self._tools.values()]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        if name not in self._tools:
            return ToolOutput(f"no tool called {name!r}", is_error=True)
        _, adapter, is_async = self._tools[name]
        try:
            if is_async:
                result = await adapter.validate_python(arguments)
            else:
                result = await anyio.to_thread.run_sync(adapter.validate_python, arguments)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors()
            )
            return ToolOutput(f"wrong arguments for {name}: {problems}", is_error=True)
        except Exception as exc:  # the function's own failure: the model reads it
            return ToolOutput(f"{name} failed: {type(exc).__name__}: {exc}", is_error=True)
        return ToolOutput(result if isinstance(result, str) else _as_json(result))


def _as_json(value: Any) -> str:
    return json.dumps(to_jsonable_python(value, fallback=str), ensure_ascii=False)
