"""What every request handler shares: the config, the providers, the MCP pool.

Built in one place (`ServiceState.for_config`) and run in one place (`running`, or both at
once: `async with ServiceState.open(config) as state`), whatever face serves it: the HTTP
app keeps it on `app.state.farmhand`, `farmhand mcp serve`, the CLI and the Python API hold
it for as long as they run. No module-level state.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import anyio

from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.errors import ConfigError, UnknownModelError
from farmhand.observability import NO_OBSERVER, Observer
from farmhand.paths import farmhand_home
from farmhand.providers.base import Provider
from farmhand.providers.factory import provider_for
from farmhand.providers.llamacpp import SERVED_N_PARALLEL
from farmhand.rag import Library, home_library
from farmhand.runtime.questions import PendingAnswers
from farmhand.service.agent_tasks import AgentTaskStore
from farmhand.service.eval_reports import EvalReports
from farmhand.service.loaded_models import LoadedModels, loaded_models
from farmhand.service.model_files import LoadedModel, ModelFiles
from farmhand.service.model_memory import budget_bytes
from farmhand.service.parked import ChatRunner, HandCall
from farmhand.service.question_holders import QuestionHolders
from farmhand.service.responses_store import ResponseStore
from farmhand.service.tasks import TaskStore
from farmhand.toolsets.mcp.definitions import load_definitions
from farmhand.toolsets.mcp.policy import KnownServers, RequestPolicy, known_servers
from farmhand.toolsets.mcp.pool import MCPPool

ProviderFactory = Callable[[ModelConfig], Provider]

CLIENT_KEY = "farmhand.client"
"""Where the API gate notes in a request's scope which key it was let in with (a digest of
it), for what is bounded or kept per client (/mcp sessions, A2A tasks)."""


def default_provider_factory(model: ModelConfig) -> Provider:
    return provider_for(model, n_parallel=SERVED_N_PARALLEL)


@dataclass
class ServiceState:
    config: FarmhandConfig
    home: Path
    pool: MCPPool
    provider_factory: ProviderFactory = default_provider_factory
    own_providers: bool = False
    """Its providers come from a factory its caller gave (a program's, a test's), not from
    the config's entries (the factory may still be wrapped, e.g. to report waits)."""
    api_keys: frozenset[str] = frozenset()
    # Every chat's task record (SQLite under `home`), opened on first use by `task_store()`.
    tasks: TaskStore | None = None
    # Stored responses (the Responses API's `store`), same file, opened on first use.
    responses: ResponseStore | None = None
    # A2A tasks' whole records (`agent_tasks.py`), same file, opened on first use.
    agent_tasks: AgentTaskStore | None = None
    catalog: bool = False
    """A local face (the Python API): a model name may be one of the catalog's too, as
    in `farmhand chat -m NAME`."""
    outside_config: bool = False
    """The config came from a client (a project written through the API), not the operator:
    its MCP servers are held to the request policy like a request's own."""
    files: ModelFiles = field(default_factory=ModelFiles)
    """GGUF headers, digests and embedding contexts, read or built once per file."""
    answers: PendingAnswers = field(default_factory=PendingAnswers)
    """The questions chats wait on for a Responses client's answer (`service.parked`)."""
    chats: ChatRunner | None = None
    """The chats that may outlive their request (paused on a question); opened by
    `running()`."""
    hand_questions: dict[str, HandCall] = field(default_factory=dict)
    """Calls by hand (the playground's tool form) waiting on their server's question, by
    the question's id (`service.hand_call`)."""
    link_key: bytes = field(default_factory=lambda: secrets.token_bytes(32))
    """Signs the links to eval reports (`service.eval_reports`); new for every run."""
    models: LoadedModels = field(default_factory=lambda: LoadedModels(budget_bytes(None)))
    """The loaded models, under the memory budget; projects share the server's."""
    observer: Observer = NO_OBSERVER
    """Records metrics and traces (`farmhand serve`'s, `assembly.service_for`); the
    other faces watch nothing."""

    @classmethod
    def for_config(
        cls,
        config: FarmhandConfig,
        *,
        home: Path | None = None,
        provider_factory: ProviderFactory | None = None,
        api_keys: frozenset[str] = frozenset(),
        models: LoadedModels | None = None,
        observer: Observer = NO_OBSERVER,
    ) -> ServiceState:
        """The state `config` describes, for every face alike: the MCP pool with the
        `server.request_servers` bounds, the questions' timeout, the models under
        `server.engine`'s budget (`models`: another registry, e.g. the CLI's unbounded one).
        Nothing runs until `running()`. `observer` watches the chats, the pool and the
        embedded engines' queues."""
        pool = MCPPool(
            call_timeout=config.runtime.tool_timeout,
            request_idle_timeout=config.server.request_servers.idle_timeout,
            max_request_servers=config.server.request_servers.max_alive,
            observer=observer,
        )
        if observer.metrics is not None:
            observer.metrics.watch_pool(lambda: [c.status for c in pool.connections])
        factory = provider_factory or default_provider_factory
        models = models or loaded_models(config.server.engine)
        observer.watch_deployments(lambda: pool_deployments(models))
        return cls(
            config=config,
            answers=PendingAnswers(timeout=config.server.question_timeout),
            home=home or farmhand_home(),
            pool=pool,
            provider_factory=factory,
            own_providers=provider_factory is not None,
            api_keys=api_keys,
            models=models,
            observer=observer,
        )

    @classmethod
    @asynccontextmanager
    async def open(
        cls, config: FarmhandConfig, home: Path | None = None, **built: Any
    ) -> AsyncIterator[ServiceState]:
        """`for_config` (`built`: its other arguments) and `running` in one: the state,
        running until the block ends."""
        state = cls.for_config(config, home=home, **built)
        async with state.running():
            yield state

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Runs what the state owns: the MCP pool, the chats that may pause, the keep_alive
        sweep; on exit (also when the block fails) the paused chats end first, then the
        pool's sessions and their servers, then the providers and the stores."""
        failure: Exception | None = None
        try:
            async with (
                self.pool,  # outlives the chats: paused ones end first
                self.chat_runner(),
                anyio.create_task_group() as tg,
            ):
                tg.start_soon(self.models.sweep_forever)  # keep_alive, without a request
                try:
                    yield
                except Exception as exc:  # the block's own, raised below as it is
                    failure = exc  # (through the task group it would be an exception group)
                tg.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await self.aclose()
        if failure is not None:
            raise failure

    def model_config(self, name: str | ModelConfig | None) -> ModelConfig:
        """The configured model called `name` (the default one for None or ""); ConfigError
        names the models there are (UnknownModelError, a 404 over HTTP). A ModelConfig is
        one a local face chose itself (the CLI's `--model-path`), used as it is."""
        if isinstance(name, ModelConfig):
            return name
        try:
            return self.config.model(name or None, catalog=self.catalog)
        except ConfigError as exc:
            if name and name not in self.model_names():
                raise UnknownModelError(str(exc)) from None
            raise

    @cached_property
    def policy(self) -> RequestPolicy:
        """The operator's rules for servers and folders from requests (`server:`)."""
        return RequestPolicy.from_config(self.config.server)

    @cached_property
    def library(self) -> Library:
        """The RAG collections under `home`, one library for the service: each collection's
        file opened once, questions embedded by the service's contexts (`/api/embed`'s)."""
        return home_library(self.home, self.files.embedder)

    def known_servers(self) -> KnownServers:
        """The servers a request may name: the config's and the definitions file's."""
        configured = [] if self.outside_config else self.config.mcp.servers
        return known_servers(configured, load_definitions())

    def model_names(self) -> list[str]:
        """The names a request may use as `model`."""
        return [m.name for m in self.config.runtime.models] or ["default"]

    async def provider(self, model: ModelConfig) -> Provider:
        """One provider per model, built on first use (loading a GGUF takes a moment, so it
        happens in a worker thread, once), under the memory budget (`loaded_models.py`)."""
        return await self.models.provider(
            model, reporting_waits(self.provider_factory, self.observer)
        )

    def loaded(self) -> list[LoadedModel]:
        """The models whose provider is built (Ollama's "running" models)."""
        return self.models.loaded()

    def keep_alive(self, model: ModelConfig, seconds: float | None) -> None:
        """Keep `model` loaded `seconds` after its last use (None: until its memory is
        needed). Expired models are closed within a few seconds (`LoadedModels.sweep`)."""
        self.models.keep_alive(model, seconds)

    def unload(self, model: ModelConfig) -> bool:
        """Forget and close `model`'s provider; False if it was not loaded. A request still
        generating keeps it until it is done; llama.cpp's memory is freed then."""
        return self.models.unload(model)

    def chat_runner(self) -> ChatRunner:
        """The runner of the chats that may pause; built on first use, opened by
        `running()`."""
        if self.chats is None:
            self.chats = ChatRunner(self.answers, QuestionHolders.shared(self.config.server.store))
        return self.chats

    def task_store(self) -> TaskStore:
        if self.tasks is None:
            self.tasks = TaskStore.in_home(self.home, self.config.server.store)
            self.tasks.fail_unfinished()  # left working by a previous run of the server
        return self.tasks

    def eval_reports(self) -> EvalReports:
        """The eval reports kept under `home` (`farmhand eval --html`)."""
        return EvalReports(self.home, self.link_key)

    def response_store(self) -> ResponseStore:
        if self.responses is None:
            self.responses = ResponseStore.in_home(self.home, self.config.server.store)
        return self.responses

    def agent_task_store(self) -> AgentTaskStore:
        if self.agent_tasks is None:
            self.task_store()  # first: it fails the tasks a previous run left working
            self.agent_tasks = AgentTaskStore.in_home(self.home, self.config.server.store)
        return self.agent_tasks

    async def aclose(self) -> None:
        if self.chats is not None and self.chats.holders is not None:
            self.chats.holders.close()
            self.chats.holders = None
        if self.agent_tasks is not None:
            self.agent_tasks.close()
            self.agent_tasks = None
        if self.responses is not None:
            self.responses.close()
            self.responses = None
        if self.tasks is not None:
            self.tasks.close()
            self.tasks = None
        if (library := self.__dict__.pop("library", None)) is not None:
            library.close()  # its embedders are the service's contexts: closed just below
        await self.models.aclose()
        self.files.close()
        # Flushes the last spans: in a worker thread, as a collector that is down holds
        # the exporter up to its timeout.
        await anyio.to_thread.run_sync(self.observer.close)


def reporting_waits(factory: ProviderFactory, observer: Observer) -> ProviderFactory:
    """`factory`, whose embedded providers tell `observer` how long turns wait for them:
    the observer of the state that loads the model, so a project's model is labelled as
    its project's (`Observer.for_project`), never as the operator's model of that name."""
    if not observer.active:
        return factory

    def build(model: ModelConfig) -> Provider:
        provider = factory(model)
        report = wrapped_method(provider, "report_waits")  # the embedded engine's
        if report is not None:
            report(lambda seconds: observer.embedded_wait(model.name, seconds))
        return provider

    return build


def pool_deployments(models: LoadedModels) -> list[tuple[str, Any]]:
    """(model name, its deployments' states) for every loaded model served by a pool of
    deployments (a provider with `snapshot()`), for the deployment gauges."""
    found = []
    for loaded in models.loaded():
        snapshot = wrapped_method(loaded.provider, "snapshot")
        if snapshot is not None:
            found.append((loaded.config.name, snapshot()))
    return found


def wrapped_method(provider: object, name: str) -> Any:
    """The method `name` of `provider` or of the provider it wraps (`inner`), if any."""
    while provider is not None:
        method = getattr(provider, name, None)
        if method is not None:
            return method
        provider = getattr(provider, "inner", None)
    return None
