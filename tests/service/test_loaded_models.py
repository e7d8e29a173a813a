"""Loaded models under a memory budget: the least recently used idle model makes room, a
busy one never does (503 then), a model larger than the budget is refused before it loads,
keep_alive closes a model when it runs out, and every model that goes is closed (its
engine freed), so /api/ps lists what is loaded now, not every model ever loaded."""

from __future__ import annotations

import threading

import anyio
import pytest

from farmhand.config.models import ModelConfig
from farmhand.config.server import EngineConfig
from farmhand.errors import BusyError, RequestError
from farmhand.messages import Finish, Usage
from farmhand.providers.llamacpp.engine import Engine, EngineLimits, EngineStatus
from farmhand.service.loaded_models import LoadedModels, loaded_models
from farmhand.service.model_memory import MIB, kv_bytes

pytestmark = pytest.mark.anyio


class EngineProvider:
    """A provider with an engine, as the embedded one has; counts how often it was closed."""

    name = "fake"

    def __init__(self, model: ModelConfig) -> None:
        self.model = model
        self.freed = threading.Event()
        self.engine = Engine(model.name, on_close=self.freed.set)

    def engine_status(self) -> EngineStatus:
        return self.engine.status()

    async def stream(self, *_: object):  # type: ignore[no-untyped-def]
        yield Finish("stop", Usage(0, 0))

    async def aclose(self) -> None:
        self.engine.close()


def model(name: str, n_ctx: int = 1024) -> ModelConfig:
    return ModelConfig(name=name, provider="llamacpp", model="/models/x.gguf", n_ctx=n_ctx)


def registry(budget_mib: int) -> LoadedModels:
    # Every model is 400 MiB here; the real estimate is tested below.
    return LoadedModels(budget_mib * MIB, EngineLimits(), estimate=lambda m: 400 * MIB)


built: list[EngineProvider] = []


def factory(config: ModelConfig) -> EngineProvider:
    provider = EngineProvider(config)
    built.append(provider)
    return provider


async def test_the_least_recently_used_idle_model_makes_room() -> None:
    models = registry(1000)  # two fit, three do not
    a = await models.provider(model("a"), factory)
    b = await models.provider(model("b"), factory)
    await models.provider(model("a"), factory)  # a is used again: b is now the oldest
    c = await models.provider(model("c"), factory)
    assert [m.config.name for m in models.loaded()] == ["a", "c"]
    assert isinstance(b, EngineProvider) and b.freed.wait(5)
    assert isinstance(a, EngineProvider) and not a.freed.is_set()
    assert isinstance(c, EngineProvider)
    assert models.in_use() == 800 * MIB


async def test_a_busy_model_is_never_evicted() -> None:
    models = registry(500)  # one at a time
    a = await models.provider(model("a"), factory)
    assert isinstance(a, EngineProvider)
    async with a.engine.turn():  # a request is generating on a
        with pytest.raises(BusyError) as refused:
            await models.provider(model("b"), factory)
    assert refused.value.status == 503 and refused.value.retry_after > 0
    assert [m.config.name for m in models.loaded()] == ["a"]
    await models.provider(model("b"), factory)  # a is idle now: it goes
    assert [m.config.name for m in models.loaded()] == ["b"]
    assert a.freed.wait(5)


async def test_a_model_larger_than_the_budget_is_refused_before_it_loads() -> None:
    models = LoadedModels(1000 * MIB, EngineLimits())
    loads: list[str] = []

    def counting(config: ModelConfig) -> EngineProvider:
        loads.append(config.name)
        return factory(config)

    huge = model("huge", n_ctx=10_000_000)
    with pytest.raises(RequestError) as refused:
        await models.provider(huge, counting)
    assert refused.value.status == 400 and refused.value.param == "n_ctx"
    assert "n_ctx" in str(refused.value) and "memory_mib" in str(refused.value)
    assert loads == [] and models.loaded() == []


async def test_keep_alive_closes_a_model_when_it_runs_out() -> None:
    models = registry(2000)
    a = await models.provider(model("a"), factory)
    assert isinstance(a, EngineProvider)
    models.keep_alive(model("a"), 0.05)
    await anyio.sleep(0.1)
    await models.sweep()
    assert models.loaded() == [] and a.freed.wait(5)


async def test_unloading_closes_the_model() -> None:
    models = registry(2000)
    a = await models.provider(model("a"), factory)
    assert isinstance(a, EngineProvider)
    assert models.unload(model("a"))
    assert a.freed.wait(5) and models.loaded() == []
    assert not models.unload(model("a"))


async def test_the_engine_limits_of_the_config_reach_each_engine() -> None:
    models = loaded_models(EngineConfig(max_queue=3, stall_timeout=7, memory_mib=4096))
    models.estimate = lambda m: 0
    a = await models.provider(model("a"), factory)
    assert isinstance(a, EngineProvider)
    assert a.engine.limits == EngineLimits(max_queue=3, stall_timeout=7)
    assert models.budget == 4096 * MIB
    await models.aclose()
    assert a.freed.wait(5)


def test_the_kv_estimate_follows_the_header() -> None:
    from farmhand.models.gguf import GGUFInfo

    header = GGUFInfo(
        3,
        {
            "general.architecture": "qwen2",
            "qwen2.block_count": 28,
            "qwen2.embedding_length": 1536,
            "qwen2.attention.head_count": 12,
            "qwen2.attention.head_count_kv": 2,
        },
        0,
    )
    # Qwen2.5-1.5B: 28 layers x (K and V) x 2 heads x 128 x 2 bytes = 28 KiB a token.
    assert kv_bytes(header, 4096) == 28 * 2 * 256 * 2 * 4096
    assert kv_bytes(None, 10) > 0
