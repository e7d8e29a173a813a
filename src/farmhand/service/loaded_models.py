"""The models the service has loaded, under a memory budget.

One provider per distinct model config (a project's "default" is not the server's), built
on first use. Before a model loads, its memory is estimated (`model_memory.py`); if the
loaded ones and it would pass `server.engine.memory_mib`, idle models go first, least
recently used first. A model a request holds or waits for is never evicted: when only busy
ones are left the request gets a 503 with Retry-After, and a model larger than the whole
budget is refused with a message naming its size. Evicted, expired (Ollama's `keep_alive`)
and unloaded models are closed, which frees their llama.cpp memory once the last request
using them is done; a load that fails frees what it took (`providers.llamacpp`).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import anyio
import anyio.to_thread

from farmhand.config.models import ModelConfig
from farmhand.config.server import EngineConfig
from farmhand.errors import BusyError, RequestError
from farmhand.providers.base import Provider
from farmhand.providers.deployment_pool import DeploymentPool, DeploymentState
from farmhand.providers.llamacpp import SERVED_N_PARALLEL, EngineLimits, EngineStatus
from farmhand.service.model_files import LoadedModel
from farmhand.service.model_memory import MIB, budget_bytes, estimate_bytes

ProviderFactory = Callable[[ModelConfig], Provider]
Estimate = Callable[[ModelConfig], int]
SWEEP_SECONDS = 5.0  # how often expired keep_alive models are looked for


def default_estimate(model: ModelConfig) -> int:
    """What `model` takes once loaded by the service (which serves SERVED_N_PARALLEL
    sequences when the entry names no n_parallel)."""
    return estimate_bytes(model, context_of(model), model.n_parallel or SERVED_N_PARALLEL)


def context_of(model: ModelConfig) -> int:
    """The context the model loads with (imported when asked: the embedded provider's
    module brings every tool-call parser with it)."""
    from farmhand.providers.llamacpp import DEFAULT_N_CTX

    return model.n_ctx or DEFAULT_N_CTX


def engine_status(provider: Provider) -> EngineStatus | None:
    """The engine of an embedded provider (also inside a wrapper such as prompt_based)."""
    status: Callable[[], EngineStatus] | None = getattr(provider, "engine_status", None)
    if status is not None:
        return status()
    inner = getattr(provider, "inner", None)
    return engine_status(inner) if inner is not None else None


def deployment_states(provider: Provider) -> list[DeploymentState]:
    """The deployments of a model served by several (also inside a wrapper such as
    prompt_based); [] for one served by a single backend."""
    if isinstance(provider, DeploymentPool):
        return provider.snapshot()
    inner = getattr(provider, "inner", None)
    return deployment_states(inner) if inner is not None else []


def _set_limits(provider: Provider, limits: EngineLimits) -> None:
    engine = getattr(provider, "engine", None)
    if engine is not None:
        engine.limits = limits
    inner = getattr(provider, "inner", None)
    if inner is not None:
        _set_limits(inner, limits)


def _close_engine(provider: Provider) -> None:
    engine = getattr(provider, "engine", None)
    if engine is not None:
        engine.close()
    inner = getattr(provider, "inner", None)
    if inner is not None:
        _close_engine(inner)


def _busy(provider: Provider) -> bool:
    status = engine_status(provider)
    return status is not None and (status.active + status.queued) > 0


def loaded_models(config: EngineConfig) -> LoadedModels:
    """The registry `server.engine` describes."""
    return LoadedModels(
        budget_bytes(config.memory_mib),
        EngineLimits(max_queue=config.max_queue, stall_timeout=config.stall_timeout),
    )


def unbounded_models() -> LoadedModels:
    """The registry of a command that loads the one model it was asked for (the CLI): no
    budget to refuse it by, as before there was a service under it."""
    return LoadedModels(sys.maxsize)


@dataclass
class LoadedModels:
    """Every loaded model of a server (projects share it), under `budget` bytes."""

    budget: int
    limits: EngineLimits = field(default_factory=EngineLimits)
    estimate: Estimate = default_estimate
    _loaded: dict[str, LoadedModel] = field(default_factory=dict)
    _loading: anyio.Lock = field(default_factory=anyio.Lock)
    _closing: list[Provider] = field(default_factory=list)

    async def provider(self, model: ModelConfig, factory: ProviderFactory) -> Provider:
        now = time.time()
        for ready in self._loaded.values():
            # Fast path, the same config object as last time: every request of a served
            # model comes here, and neither a lock nor serializing the config is needed.
            if ready.config is model and not ready.expired(now):
                ready.last_used = now
                return ready.provider
        key = model.model_dump_json()
        async with self._loading:
            await self.sweep()
            loaded = self._loaded.get(key)
            if loaded is None:
                need = await anyio.to_thread.run_sync(self.estimate, model)
                await self._make_room(model, need)
                provider = await anyio.to_thread.run_sync(factory, model)
                _set_limits(provider, self.limits)
                loaded = self._loaded[key] = LoadedModel(model, provider, memory=need)
            loaded.last_used = time.time()
            return loaded.provider

    def loaded(self) -> list[LoadedModel]:
        return list(self._loaded.values())

    def in_use(self) -> int:
        return sum(m.memory for m in self._loaded.values())

    def keep_alive(self, model: ModelConfig, seconds: float | None) -> None:
        loaded = self._loaded.get(model.model_dump_json())
        if loaded is not None:
            loaded.keep_alive = seconds
            loaded.last_used = time.time()

    def unload(self, model: ModelConfig) -> bool:
        """Forget `model`'s provider and close it (an embedded model's memory goes when the
        requests still using it are done); False if it was not loaded."""
        loaded = self._loaded.pop(model.model_dump_json(), None)
        if loaded is None:
            return False
        self._close_soon(loaded.provider)
        return True

    async def sweep(self) -> None:
        """Close the models whose keep_alive ran out (a busy one stays until it is idle),
        and finish closing the unloaded ones."""
        now = time.time()
        for key, loaded in list(self._loaded.items()):
            if loaded.expired(now) and not _busy(loaded.provider):
                del self._loaded[key]
                self._close_soon(loaded.provider)
        closing, self._closing = self._closing, []
        for provider in closing:
            await provider.aclose()

    def _close_soon(self, provider: Provider) -> None:
        """An engine is closed now (it frees its model when idle); the rest of the provider
        (HTTP sessions) at the next sweep, which may await."""
        _close_engine(provider)
        self._closing.append(provider)

    async def sweep_forever(self) -> None:
        """`sweep` every few seconds, so keep_alive holds without a request to notice it."""
        while True:
            await anyio.sleep(SWEEP_SECONDS)
            await self.sweep()

    async def aclose(self) -> None:
        loaded, self._loaded = list(self._loaded.values()), {}
        for model in loaded:
            self._close_soon(model.provider)
        await self.sweep()

    async def _make_room(self, model: ModelConfig, need: int) -> None:
        if need > self.budget:
            raise RequestError(
                f"model {model.name!r} needs about {need // MIB} MiB (weights and a context"
                f" of {context_of(model)} tokens), more than the server's model memory"
                f" budget of {self.budget // MIB} MiB; lower its n_ctx, or have the operator"
                " raise server.engine.memory_mib",
                param="n_ctx",
                code="model_too_large",
            )
        idle = sorted(
            (m for m in self._loaded.values() if not _busy(m.provider)),
            key=lambda m: m.last_used,
        )
        while self.in_use() + need > self.budget and idle:
            evicted = idle.pop(0)
            self._loaded.pop(evicted.config.model_dump_json(), None)
            self._close_soon(evicted.provider)
        await self.sweep()
        if self.in_use() + need > self.budget:
            raise BusyError(
                f"model {model.name!r} needs about {need // MIB} MiB and the models in use"
                f" hold {self.in_use() // MIB} of the {self.budget // MIB} MiB budget"
                " (server.engine.memory_mib); retry when they are done",
                retry_after=10,
                status=503,
            )
