"""What every request handler shares: the config, the providers, the MCP pool.

Built by `create_app` (no module-level state) and kept on `app.state.farmhand`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import anyio

from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.errors import ConfigError, UnknownModelError
from farmhand.providers.base import Provider
from farmhand.providers.factory import provider_for
from farmhand.runtime.questions import PendingAnswers
from farmhand.service.model_files import LoadedModel, ModelFiles
from farmhand.service.parked import ChatRunner
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
    files: ModelFiles = field(default_factory=ModelFiles)
    """GGUF headers, digests and embedding contexts, read or built once per file."""
    answers: PendingAnswers = field(default_factory=PendingAnswers)
    """The questions chats wait on for a Responses client's answer (`service.parked`)."""
    chats: ChatRunner | None = None
    """The chats that may outlive their request (paused on a question); opened with the
    app's lifespan (`open_chats`)."""
    _loaded: dict[str, LoadedModel] = field(default_factory=dict)
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

    @cached_property
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
        now = time.time()
        for ready in self._loaded.values():
            # Fast path, the same config object as last time: every request of a served
            # model comes here, and neither a lock nor serializing the config is needed.
            if ready.config is model and not ready.expired(now):
                ready.last_used = now
                return ready.provider
        # Keyed by the whole model config, not its name: a project's model "default" is not
        # the server's (projects share this cache through `dataclasses.replace`).
        key = model.model_dump_json()
        async with self._loading:
            self._unload_expired()
            loaded = self._loaded.get(key)
            if loaded is None:
                provider = await anyio.to_thread.run_sync(self.provider_factory, model)
                loaded = self._loaded[key] = LoadedModel(model, provider)
            loaded.last_used = time.time()
            return loaded.provider

    def loaded(self) -> list[LoadedModel]:
        """The models whose provider is built (Ollama's "running" models)."""
        self._unload_expired()
        return list(self._loaded.values())

    def keep_alive(self, model: ModelConfig, seconds: float | None) -> None:
        """Keep `model` loaded `seconds` after its last use (None: for the server's life).
        Expired models are dropped at the next request that loads or lists models."""
        loaded = self._loaded.get(model.model_dump_json())
        if loaded is not None:
            loaded.keep_alive = seconds
            loaded.last_used = time.time()

    def unload(self, model: ModelConfig) -> bool:
        """Forget `model`'s provider; False if it was not loaded. It is not closed here: a
        request still generating holds it, and it is freed (llama.cpp's memory with it)
        when the last one lets go."""
        return self._loaded.pop(model.model_dump_json(), None) is not None

    def _unload_expired(self) -> None:
        now = time.time()
        for key, loaded in list(self._loaded.items()):
            if loaded.expired(now):
                del self._loaded[key]

    def chat_runner(self) -> ChatRunner:
        """The runner of the chats that may pause; built on first use, opened by the app's
        lifespan (`async with state.chat_runner()`)."""
        if self.chats is None:
            self.chats = ChatRunner(self.answers)
        return self.chats

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
        for loaded in self._loaded.values():
            await loaded.provider.aclose()
        self._loaded.clear()
        self.files.close()
