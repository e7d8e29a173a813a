"""Everything one chat needs, built from the config: the provider, the tools, the prompt."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from farmhand.config.models import FarmhandConfig, McpServerConfig, ModelConfig
from farmhand.errors import ConfigError
from farmhand.messages import Message
from farmhand.providers.base import Provider
from farmhand.runtime.executor import ToolRouter
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.base import Toolset
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.wrappers import (
    FilteredToolset,
    PrefixedToolset,
    WorkingDirPaths,
    read_only_current,
)


def build_provider(
    model: ModelConfig, *, model_path: Path | None = None, progress: bool = True
) -> Provider:
    """The provider a model entry names. Loads the embedded model (a few seconds).

    `tool_call_strategy: prompt_based` wraps it in PromptBasedProvider: tools described in
    the system prompt, `<tool_call>` tags parsed back.
    """
    provider = _backend(model, model_path=model_path, progress=progress)
    if model.tool_call_strategy == "prompt_based":
        from farmhand.prompting.prompt_based import PromptBasedProvider

        return PromptBasedProvider(provider)
    return provider


def _backend(model: ModelConfig, *, model_path: Path | None, progress: bool) -> Provider:
    if model.provider in ("llamacpp", "embedded"):
        from farmhand.models.assemble import ensure_model
        from farmhand.models.catalog import DEFAULT_MODEL
        from farmhand.providers.llamacpp import (
            DEFAULT_N_CTX,
            DEFAULT_TEMPERATURE,
            LlamaCppProvider,
        )
        from farmhand.runtime.loading import load_with_progress

        source = str(model_path or model.model_path or model.model or DEFAULT_MODEL)
        path = ensure_model(source, progress=progress)
        llama = load_with_progress(path, n_ctx=model.n_ctx or DEFAULT_N_CTX, progress=progress)
        return LlamaCppProvider(
            llama,
            model_name=model.model or path.stem,
            default_temperature=DEFAULT_TEMPERATURE
            if model.temperature is None
            else model.temperature,
            constrained=model.constrained,
            tool_parser=model.tool_parser,
        )
    if model.provider in ("openai", "universal", "ollama"):
        from farmhand.providers.openai_compat import OpenAICompatProvider

        base_url = model.base_url or _default_base_url(model.provider)
        if not model.model:
            raise ConfigError(f"model {model.name!r}: provider {model.provider} needs `model:`")
        return OpenAICompatProvider(
            base_url=base_url,
            model=model.model,
            api_key=model.api_key,
            name=model.provider,
            extra_params=dict(model.model_api_parameters) or None,
        )
    raise ConfigError(
        f"model {model.name!r}: provider {model.provider!r} is not available yet;"
        " use llamacpp or an OpenAI-compatible endpoint (provider: openai, base_url: ...)"
    )


def _default_base_url(provider: str) -> str:
    return {
        "openai": "https://api.openai.com/v1",
        "ollama": "http://localhost:11434/v1",
        "universal": "http://localhost:11540/v1",
    }[provider]


@dataclass
class ChatSession:
    """A provider, connected toolsets and the opening messages for one model.

    Use as `async with`: MCP servers start on entry and are stopped (with their child
    processes) on exit.
    """

    provider: Provider
    servers: Sequence[McpServerConfig]
    model: ModelConfig
    system_prompt: str | None = None
    tool_timeout: float = 30.0
    max_tool_rounds: int = 10
    # Servers farmhand started for a folder the user named (--tools DIR): relative paths in
    # their calls mean the user's working directory.
    folder_servers: frozenset[str] = frozenset()
    # Tools the caller defined and runs itself (e.g. `chat --tools-file`): calls to them
    # end the loop and are handed back.
    client_tools: Sequence[ToolDefinition] = ()
    router: ToolRouter = field(init=False)
    _stack: AsyncExitStack = field(init=False, default_factory=AsyncExitStack)

    async def __aenter__(self) -> ChatSession:
        toolsets: list[Toolset] = []
        try:
            for server in self.servers:
                toolset = MCPToolset.from_config(server, call_timeout=self.tool_timeout)
                await self._stack.enter_async_context(toolset)
                inner: Toolset = toolset
                if server.name in self.folder_servers:
                    inner = WorkingDirPaths(toolset, Path.cwd())
                    inner = FilteredToolset(
                        inner, read_only_current, "--tools gives the model read-only access"
                    )
                toolsets.append(PrefixedToolset(inner, server.name))
            self.router = ToolRouter(
                toolsets, client_tools=[*self.model.tool_definitions(), *self.client_tools]
            )
            await self.router.list_tools()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stack.aclose()

    def opening(self, user_prompt: str) -> list[Message]:
        messages = [Message.system(self.system_prompt)] if self.system_prompt else []
        return [*messages, Message.user(user_prompt)]


def session_for(
    config: FarmhandConfig,
    model_name: str | None,
    *,
    extra_servers: Sequence[McpServerConfig] = (),
    folder_servers: Sequence[McpServerConfig] = (),
    extra_system: str | None = None,
    model_path: Path | None = None,
    client_tools: Sequence[ToolDefinition] = (),
    progress: bool = True,
) -> ChatSession:
    model = config.model(model_name)
    provider = build_provider(model, model_path=model_path, progress=progress)
    prompt = "\n\n".join(p for p in (config.system_prompt(model), extra_system) if p) or None
    return ChatSession(
        provider=provider,
        servers=[*config.servers_for(model), *extra_servers, *folder_servers],
        folder_servers=frozenset(s.name for s in folder_servers),
        model=model,
        system_prompt=prompt,
        tool_timeout=config.runtime.tool_timeout,
        max_tool_rounds=config.runtime.max_tool_rounds,
        client_tools=client_tools,
    )
