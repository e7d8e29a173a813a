"""The models a service offers, described from what can be known about them: for the
embedded backend its GGUF file (size, sha256, header: architecture, quantization, chat
template, context length), for OpenAI-compatible backends their config. Ollama's
`/api/tags`, `/api/show` and `/api/ps` render these; any face can.

Nothing here loads a model or assembles a file: a model not pulled yet is described from
the catalog, and reading headers or hashing happens in a worker thread, once per file.
"""

from __future__ import annotations

import hashlib
import math
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio.to_thread

from farmhand.config.chat_template import chat_template_text
from farmhand.config.models import ModelConfig
from farmhand.errors import ModelError, RequestError
from farmhand.models.assemble import ensure_model, local_file
from farmhand.models.catalog import lookup
from farmhand.models.gguf import GGUFInfo, read_gguf
from farmhand.providers.deployment_pool import DeploymentState as DeploymentState
from farmhand.providers.llamacpp import Embedded, EngineStatus
from farmhand.service.loaded_models import deployment_states, engine_status
from farmhand.service.model_files import LoadedModel
from farmhand.service.model_memory import model_source
from farmhand.service.state import ServiceState

# What a chat template that can reason mentions (Qwen3's switch, DeepSeek-R1's tags, ...).
THINKING_MARKS = ("enable_thinking", "<think>", "reasoning_content", ".thinking")


@dataclass(frozen=True)
class ModelFacts:
    """One configured model as far as it can be known without loading it."""

    config: ModelConfig
    format: str  # "gguf" for the embedded backend, else the provider's name
    family: str  # the GGUF's architecture (e.g. "qwen2"), else the provider's name
    size: int  # bytes of the model file (0 when farmhand holds no file)
    digest: str  # sha256 of the file, else of the model's config
    modified: float
    parameter_size: str = ""
    quantization: str = ""
    file: Path | None = None
    gguf: GGUFInfo | None = None
    capabilities: tuple[str, ...] = ("completion", "tools")
    parameters: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def template(self) -> str:
        """The chat template the model renders with: its `chat_template` override, else
        its GGUF's."""
        override = chat_template_text(self.config.chat_template)
        if override is not None:
            return override
        return (self.gguf.chat_template or "") if self.gguf else ""

    @property
    def context_length(self) -> int | None:
        return context_size(self.config)


def context_size(model: ModelConfig) -> int | None:
    """The context the model runs with: its n_ctx, else the embedded backend's default
    (None for a backend that decides itself)."""
    return model.n_ctx or (_embedded_defaults()[0] if _is_gguf(model) else None)


def _embedded_defaults() -> tuple[int, float]:
    """The embedded backend's default context size and temperature (imported when asked:
    that module brings every tool-call parser with it)."""
    from farmhand.providers.llamacpp import DEFAULT_N_CTX, DEFAULT_TEMPERATURE

    return DEFAULT_N_CTX, DEFAULT_TEMPERATURE


async def describe(state: ServiceState, name: str | None) -> ModelFacts:
    """The model `name` names (UnknownModelError, a 404, when none)."""
    model = state.model_config(name)
    return await anyio.to_thread.run_sync(_facts, state, model)


async def list_models(state: ServiceState) -> list[ModelFacts]:
    """Every model a request may name, in the config's order."""
    config = state.config
    models = config.runtime.models or [config.model(None)]
    return await anyio.to_thread.run_sync(lambda: [_facts(state, m) for m in models])


@dataclass(frozen=True)
class RunningModel:
    facts: ModelFacts
    loaded: LoadedModel
    engine: EngineStatus | None  # an embedded model's slots and queue
    deployments: list[DeploymentState]  # a model served by several backends: each one's


async def running(state: ServiceState) -> list[RunningModel]:
    """The models loaded now, most recently used first."""
    await state.models.sweep()
    loaded = sorted(state.loaded(), key=lambda m: m.last_used, reverse=True)
    facts = await anyio.to_thread.run_sync(lambda: [_facts(state, m.config) for m in loaded])
    return [
        RunningModel(f, m, engine_status(m.provider), deployment_states(m.provider))
        for f, m in zip(facts, loaded, strict=True)
    ]


def embedding_models(state: ServiceState) -> list[str]:
    """The names of the configured models that can embed (the embedded backend's)."""
    config = state.config
    return [m.name for m in config.runtime.models or [config.model(None)] if _is_gguf(m)]


def _is_gguf(model: ModelConfig) -> bool:
    return model.provider == "llamacpp"


def _facts(state: ServiceState, model: ModelConfig) -> ModelFacts:
    if _is_gguf(model):
        return _gguf_facts(state, model)
    config_digest = hashlib.sha256(model.model_dump_json().encode()).hexdigest()
    parameters: dict[str, Any] = {}
    if model.temperature is not None:
        parameters["temperature"] = model.temperature
    if model.max_tokens is not None:
        parameters["num_predict"] = model.max_tokens
    return ModelFacts(
        model,
        format=model.provider,
        family=model.provider,
        size=0,
        digest=config_digest,
        modified=_config_time(state),
        parameters=parameters,
    )


def _gguf_facts(state: ServiceState, model: ModelConfig) -> ModelFacts:
    source = model_source(model)
    path = local_file(source)
    n_ctx, temperature = _embedded_defaults()
    parameters: dict[str, Any] = {
        "num_ctx": model.n_ctx or n_ctx,
        "temperature": temperature if model.temperature is None else model.temperature,
    }
    if model.max_tokens is not None:
        parameters["num_predict"] = model.max_tokens
    if path is None:  # not pulled yet: what the catalog says
        try:
            entry = lookup(source)
        except ModelError:
            entry = None
        return ModelFacts(
            model,
            format="gguf",
            family="",
            size=entry.size if entry else 0,
            digest=entry.sha256 if entry else "",
            modified=_config_time(state),
            capabilities=("completion", "tools", "embedding"),
            parameters=parameters,
        )
    info = state.files.info(path)
    capabilities = ["completion", "tools"]
    template = chat_template_text(model.chat_template) or info.chat_template or ""
    if any(mark in template for mark in THINKING_MARKS):
        capabilities.append("thinking")
    capabilities.append("embedding")
    return ModelFacts(
        model,
        format="gguf",
        family=info.architecture,
        size=path.stat().st_size,
        digest=state.files.digest(path),
        modified=path.stat().st_mtime,
        parameter_size=str(info.metadata.get("general.size_label") or info.parameter_size),
        quantization=info.quantization,
        file=path,
        gguf=info,
        capabilities=tuple(capabilities),
        parameters=parameters,
    )


def _config_time(state: ServiceState) -> float:
    source = state.config.source
    try:
        return source.stat().st_mtime if source is not None else time.time()
    except OSError:
        return time.time()


async def embed(
    state: ServiceState, name: str | None, texts: list[str], *, truncate: bool, normalize: bool
) -> Embedded:
    """Embeddings of `texts` from model `name`'s GGUF (its own embedding context, built on
    first use). RequestError naming the models that can embed when this one cannot."""
    model = state.model_config(name)
    if not _is_gguf(model):
        able = ", ".join(embedding_models(state)) or "none are configured"
        raise RequestError(
            f"model {model.name!r} cannot embed: it runs on the {model.provider} backend and"
            f" farmhand embeds with the embedded (llamacpp) one; models that can: {able}",
            param="model",
        )
    n_ctx = context_size(model) or _embedded_defaults()[0]

    def run() -> Embedded:
        path = ensure_model(model_source(model))
        return state.files.embedder(path, n_ctx).embed(
            texts, truncate=truncate, normalize=normalize
        )

    return await anyio.to_thread.run_sync(run)


async def verbose_metadata(facts: ModelFacts) -> dict[str, Any] | None:
    """The GGUF's key/values with every array, the tokenizer's too (megabytes: Ollama's
    `verbose` show); None for a model without a file."""
    path = facts.file
    if path is None:
        return None
    info = await anyio.to_thread.run_sync(lambda: read_gguf(path, keep_arrays=sys.maxsize))
    return info.metadata


async def check_options(
    state: ServiceState, name: str | None, *, num_ctx: int | None, think: bool | None
) -> ModelConfig:
    """The model `name` names, once the request's options fit it: a context size is the
    one it is loaded with (it cannot change per request), and reasoning is asked only of a
    model whose chat template can reason."""
    model = state.model_config(name)
    if num_ctx is not None:
        loaded_with = context_size(model)
        if num_ctx != loaded_with:
            have = f"{loaded_with} tokens" if loaded_with else "the backend's own size"
            raise RequestError(
                f"num_ctx {num_ctx}: model {model.name!r} runs with a fixed context ({have})"
                " that a request cannot change; set n_ctx in its farmhand.yaml entry and"
                " restart, or leave num_ctx out",
                param="options",
            )
    if think and _is_gguf(model):
        facts = await describe(state, model.name)
        if facts.gguf is not None and "thinking" not in facts.capabilities:
            raise RequestError(f"{model.name!r} does not support thinking", param="think")
    return model


def keep_loaded(state: ServiceState, model: ModelConfig, seconds: float | None) -> None:
    """Apply a request's keep_alive: None leaves it, 0 unloads now, infinity keeps the
    model for the server's life, anything else that long after this use."""
    if seconds is None:
        return
    if seconds == 0:
        state.unload(model)
    else:
        state.keep_alive(model, None if math.isinf(seconds) else seconds)
