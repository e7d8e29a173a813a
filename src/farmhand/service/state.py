"""What every request handler shares: the config, the providers, the MCP pool.

Built by `create_app` (no module-level state) and kept on `app.state.farmhand`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.errors import ConfigError, UnknownModelError
from farmhand.providers.base import Provider
from farmhand.providers.factory import provider_for
from farmhand.service.responses_store import ResponseStore
from farmhand.service.tasks import TaskStore
from farmhand.toolsets.mcp.definitions import load_definitions
from farmhand.toolsets.mcp.policy import KnownServers, RequestPolicy, known_servers
from farmhand.toolsets.mcp.pool import MCPPool

ProviderFactory = Callable[[ModelConfig], Provider]


def default_provider_factory(model: ModelConfig) -> Provider:
    return provider_for(model)


@dataclass
class ServiceState:
    config: FarmhandConfig
    home: Path
    pool: MCPPool
    provider_factory: ProviderFactory = default_provider_factory
    api_keys: frozenset[str] = frozenset()
    # Every chat's task record (SQLite under `home`), opened on first use by `task_store()`.
    tasks: TaskStore | None = None
    # Stored responses (the Responses API's `store`), same file, opened on first use.
    responses: ResponseStore | None = None
    outside_config: bool = False
    """The config came from a client (a project written through the API), not the operator:
    its MCP servers are held to the request policy like a request's own."""
    _providers: dict[str, Provider] = field(default_factory=dict)
    _loading: anyio.Lock = field(default_factory=anyio.Lock)

    def model_config(self, name: str | None) -> ModelConfig:
        """The configured model called `name` (the default one for None or ""); ConfigError
        names the models there are (UnknownModelError, a 404 over HTTP)."""
        try:
            return self.config.model(name or None)
        except ConfigError as exc:
            if name and name not in self.model_names():
                raise UnknownModelError(str(exc)) from None
            raise

    @property
    def policy(self) -> RequestPolicy:
        """The operator's rules for servers and folders from requests (`server:`)."""
        return RequestPolicy.from_config(self.config.server)

    def known_servers(self) -> KnownServers:
        """The servers a request may name: the config's and the definitions file's."""
        configured = [] if self.outside_config else self.config.mcp.servers
        return known_servers(configured, load_definitions())

    def model_names(self) -> list[str]:
        """The names a request may use as `model`."""
        return [m.name for m in self.config.runtime.models] or ["default"]

    async def provider(self, model: ModelConfig) -> Provider:
        """One provider per model, built on first use (loading a GGUF takes a moment, so it
        happens in a worker thread, once)."""
        # Keyed by the whole model config, not its name: a project's model "default" is not
        # the server's (projects share this cache through `dataclasses.replace`).
        key = model.model_dump_json()
        async with self._loading:
            provider = self._providers.get(key)
            if provider is None:
                provider = await anyio.to_thread.run_sync(self.provider_factory, model)
                self._providers[key] = provider
            return provider

    def task_store(self) -> TaskStore:
        if self.tasks is None:
            self.tasks = TaskStore.in_home(self.home)
            self.tasks.fail_unfinished()  # left working by a previous run of the server
        return self.tasks

    def response_store(self) -> ResponseStore:
        if self.responses is None:
            self.responses = ResponseStore.in_home(self.home)
        return self.responses

    async def aclose(self) -> None:
        if self.responses is not None:
            self.responses.close()
            self.responses = None
        if self.tasks is not None:
            self.tasks.close()
            self.tasks = None
        for provider in self._providers.values():
            await provider.aclose()
        self._providers.clear()
