"""What `import farmhand` offers (see the package's docstring): `Runtime`, one running
service (`service.state.ServiceState`, the same one `farmhand serve` runs) held by a Python
program, whose chats go through the service's one chat builder (`service.chat.run_chat`),
so the config's prompts, tool settings and limits apply as they do on every other face."""

from __future__ import annotations

import logging
import os
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypedDict, Unpack

from farmhand.config.loader import load_config
from farmhand.config.models import FarmhandConfig, McpServerConfig, ModelConfig, default_config
from farmhand.errors import ConfigError
from farmhand.eval.runner import run_suite
from farmhand.eval.scoring import ItemResult, TargetSummary
from farmhand.eval.suite import load_suite
from farmhand.eval.targets import parse_target
from farmhand.messages import Message, Usage
from farmhand.providers.base import GenerationSettings, Provider
from farmhand.providers.factory import provider_for
from farmhand.runtime.events import LoopEvent, ToolCallRecord
from farmhand.runtime.tool_paths import servers_for_path
from farmhand.service.chat import ChatRequest, complete_chat, run_chat
from farmhand.service.state import ServiceState
from farmhand.tools.choice import ToolChoice
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.functions import FunctionToolset
from farmhand.toolsets.mcp.elicitation import Refusal

log = logging.getLogger(__name__)

Tool = str | os.PathLike[str] | McpServerConfig | Callable[..., Any]
"""What `tools=` takes: a path (a folder or file the model may read, with the servers
`farmhand run --tools PATH` starts for it), an MCP server, or a Python function."""

NO_QUESTIONS = Refusal(
    "farmhand's Python API answers no questions from MCP servers; serve the tools over"
    " `farmhand serve` and ask through the Responses API to answer them"
)


class ChatOptions(TypedDict, total=False):
    """What `Runtime.chat` and `Runtime.stream` take besides the prompt."""

    tools: Iterable[Tool]
    """Tools beside the model's configured ones."""
    model: str | None
    """A configured or catalog model (default: the runtime's, else the config's)."""
    temperature: float | None
    max_tokens: int | None
    """The most tokens per model turn."""
    seed: int | None
    tool_choice: str
    """"auto" (default), "none", "required" or a tool's name."""
    max_tool_rounds: int | None
    """Default: the config's `runtime.max_tool_rounds`."""


@dataclass(frozen=True)
class Answer:
    """A chat run to its end. `str(answer)` is its text; continue the conversation with
    `rt.chat([*answer.messages, farmhand.Message.user("...")])`."""

    text: str
    tool_calls: tuple[ToolCallRecord, ...]
    messages: tuple[Message, ...]
    usage: Usage
    stop_reason: str
    """"stop", or "round_limit" when the model used every tool round and answered from the
    results so far (`runtime.max_tool_rounds`)."""
    reasoning: str = ""

    def __str__(self) -> str:
        return self.text


class Runtime:
    """farmhand in a Python program: use it as `async with farmhand.Runtime(...) as rt`.

    `config`: a farmhand.yaml (or llamafarm.yaml) path, a loaded `FarmhandConfig`, or None
    for none (the embedded default model, no MCP servers). `model`: the model chats use when
    they name none (a configured one, or one of the catalog's). `home`: where farmhand keeps
    its files (default: FARMHAND_HOME, else ~/.farmhand).

    Entering it starts nothing slow: a model loads at its first chat (and stays loaded until
    the block ends, under `server.engine.memory_mib`), an MCP server starts at its first use
    and runs until the block ends."""

    def __init__(
        self,
        config: FarmhandConfig | str | os.PathLike[str] | None = None,
        *,
        model: str | None = None,
        home: str | os.PathLike[str] | None = None,
    ) -> None:
        if config is None:
            self.config = default_config()
        elif isinstance(config, FarmhandConfig):
            self.config = config
        else:
            self.config = load_config(Path(config))
        self.model = model
        self._home = Path(home) if home is not None else None
        self._state: ServiceState | None = None
        self._stack = AsyncExitStack()

    async def __aenter__(self) -> Runtime:
        if self._state is not None:
            raise RuntimeError("this Runtime is already open; enter it once")
        state = ServiceState.for_config(self.config, home=self._home, provider_factory=_local)
        state.catalog = True
        await self._stack.enter_async_context(state.running())
        self._state = state
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._state = None
        await self._stack.aclose()

    async def chat(self, prompt: str | Sequence[Message], **options: Unpack[ChatOptions]) -> Answer:
        """Ask `prompt` (a question, or a whole conversation of `Message`s); the model may
        call the `tools` of `options` (and its configured ones). Raises a
        `farmhand.FarmhandError` naming what to fix (an unknown model, a path that does not
        exist, a server that does not start)."""
        outcome = await complete_chat(self._running(), self._request(prompt, options))
        finished = outcome.finished
        return Answer(
            text=finished.answer,
            tool_calls=finished.tool_calls,
            messages=finished.messages,
            usage=finished.usage,
            stop_reason=finished.stop_reason,
            reasoning=outcome.reasoning,
        )

    def stream(
        self, prompt: str | Sequence[Message], **options: Unpack[ChatOptions]
    ) -> AsyncGenerator[LoopEvent, None]:
        """`chat`'s events as they happen (`TextChunk`, `ReasoningChunk`, `ToolCallStarted`,
        `ToolCallFinished`, ...), the last a `LoopFinished`. Read it to its end, or close it
        (`contextlib.aclosing`) when you stop early: that stops the model."""
        return run_chat(self._running(), self._request(prompt, options))

    async def eval(
        self,
        suite: str = "builtin",
        *,
        target: str | None = None,
        categories: Iterable[str] = (),
        limit: int | None = None,
        on_item: Callable[[ItemResult], None] | None = None,
    ) -> TargetSummary:
        """`farmhand eval` for one target: `suite` is "builtin", a JSONL file or
        "bfcl:CATEGORY"; `target` as `--target` writes it (default: the runtime's model);
        `categories` and `limit` select cases; `on_item` sees each result as it is scored."""
        spec = target or self.model or "default"
        chosen = parse_target(spec, self.config)
        cases = load_suite(suite).select(list(categories), limit)
        provider: Provider = await self._running().provider(chosen.model)
        results = await run_suite(provider, cases, chosen.options, on_item=on_item)
        return TargetSummary(chosen.label, tuple(results), chosen.describe())

    def _running(self) -> ServiceState:
        if self._state is None:
            raise RuntimeError("open the runtime first: `async with farmhand.Runtime() as rt`")
        return self._state

    def _request(self, prompt: str | Sequence[Message], options: ChatOptions) -> ChatRequest:
        messages = [Message.user(prompt)] if isinstance(prompt, str) else list(prompt)
        if not messages:
            raise ConfigError("chat needs a prompt: a question, or a list of messages")
        settings = GenerationSettings(
            temperature=options.get("temperature"),
            max_tokens=options.get("max_tokens"),
            seed=options.get("seed"),
            tool_choice=ToolChoice.parse(options.get("tool_choice", "auto")),
        )
        offered = _ToolsOffered.of(options.get("tools", ()))
        return ChatRequest(
            model=options.get("model") or self.model,
            messages=messages,
            settings=settings,
            max_tool_rounds=options.get("max_tool_rounds"),
            asker=NO_QUESTIONS,
            own_servers=offered.servers,
            folder_servers=offered.folders,
            toolsets=offered.toolsets,
        )


@dataclass(frozen=True)
class _ToolsOffered:
    servers: list[McpServerConfig]
    folders: list[McpServerConfig]
    toolsets: list[Toolset]

    @classmethod
    def of(cls, tools: Iterable[Tool]) -> _ToolsOffered:
        servers: list[McpServerConfig] = []
        folders: list[McpServerConfig] = []
        functions: list[Callable[..., Any]] = []
        for tool in [tools] if isinstance(tools, str | os.PathLike) else tools:
            if isinstance(tool, McpServerConfig):
                servers.append(tool)
            elif isinstance(tool, str | os.PathLike):
                path = Path(tool).expanduser()
                if not path.exists():
                    raise ConfigError(f"tools: {tool}: no such file or folder")
                found = servers_for_path(path)
                for note in found.notes:
                    log.warning("tools: %s: %s (skipped)", tool, note)
                for server in found.servers:
                    if server in servers:  # one every path turns on (`auto_enable: always`)
                        continue
                    taken = {s.name for s in [*servers, *folders]}
                    named = _unique(server, taken)
                    (folders if server.name in found.folder_servers else servers).append(named)
            elif callable(tool):
                functions.append(tool)
            else:
                raise ConfigError(f"tools: {tool!r} is not a path, an McpServer or a function")
        return cls(servers, folders, [FunctionToolset(functions)] if functions else [])


def _unique(server: McpServerConfig, taken: set[str]) -> McpServerConfig:
    """`server`, renamed `name_2`, `name_3`, ... when two paths start one of a kind."""
    name, n = server.name, 1
    while name in taken:
        n += 1
        name = f"{server.name}_{n}"
    return server if name == server.name else server.model_copy(update={"name": name})


def _local(model: ModelConfig) -> Provider:
    """A model for one program: the embedded one with its own number of sequences (the
    served default is four)."""
    return provider_for(model)
