"""`provider_for(model)`: the provider a model entry of the config names, built here so
every face (CLI, HTTP, MCP, eval) gets the same one.

Loading the embedded model takes seconds; the caller may pass its own `load` to show
progress (the CLI draws a bar), since display is not a provider's business.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from farmhand.config.models import ModelConfig
from farmhand.errors import ConfigError
from farmhand.models.assemble import ByteProgress as ByteProgress  # runtime may not import models
from farmhand.providers.base import Provider

if TYPE_CHECKING:
    from farmhand.providers.backend_http import HTTPProvider

LlamaLoader = Callable[[Path, int], Any]
"""Loads a GGUF with a context size into a `llama_cpp.Llama`."""

DEFAULT_BASE_URLS = {
    "openai": "https://api.openai.com/v1",
    "ollama": "http://localhost:11434/v1",
    "universal": "http://localhost:11540/v1",
}


def provider_for(
    model: ModelConfig,
    *,
    model_path: Path | None = None,
    load: LlamaLoader | None = None,
    progress: ByteProgress | None = None,
    n_parallel: int | None = None,
) -> Provider:
    """The provider `model` names. `tool_call_strategy: prompt_based` wraps it in
    PromptBasedProvider (tools described in the system prompt, `<tool_call>` tags parsed
    back). `progress` shows the assembling of a catalog model not in the cache yet.
    `n_parallel`: the sequences an embedded model steps together when its entry names none
    (`llamacpp.DEFAULT_N_PARALLEL` when not given; a server passes its own)."""
    provider = _backend(
        model, model_path=model_path, load=load, progress=progress, n_parallel=n_parallel
    )
    if model.tool_call_strategy == "prompt_based":
        from farmhand.providers.prompt_based import PromptBasedProvider

        return PromptBasedProvider(provider)
    return provider


def _backend(
    model: ModelConfig,
    *,
    model_path: Path | None,
    load: LlamaLoader | None,
    progress: ByteProgress | None,
    n_parallel: int | None,
) -> Provider:
    if model.provider == "llamacpp":  # "embedded" is read as llamacpp by the config
        from farmhand.config.chat_template import chat_template_text
        from farmhand.models.assemble import ensure_model
        from farmhand.models.catalog import DEFAULT_MODEL
        from farmhand.providers.llamacpp import (
            DEFAULT_N_CTX,
            DEFAULT_N_PARALLEL,
            LlamaCppProvider,
            free_failed_load,
            load_llama,
            profile_for,
        )

        source = str(model_path or model.model_path or model.model or DEFAULT_MODEL)
        template = chat_template_text(model.chat_template)  # before the weights load
        path = ensure_model(source, progress=progress)
        n_ctx = model.n_ctx or DEFAULT_N_CTX
        llama = load(path, n_ctx) if load is not None else load_llama(path, n_ctx=n_ctx)
        try:
            return LlamaCppProvider(
                llama,
                profile_for(model, source),
                model_name=model.model or path.stem,
                chat_template=template,
                prefix_cache=model.prefix_cache,
                n_parallel=model.n_parallel or n_parallel or DEFAULT_N_PARALLEL,
            )
        except Exception:
            free_failed_load(llama)  # e.g. no chat template: the weights go now
            raise
    if model.provider in (*DEFAULT_BASE_URLS, "anthropic"):
        if not model.model:
            raise ConfigError(f"model {model.name!r}: provider {model.provider} needs `model:`")
        if model.deployments:
            return _pool(model, model.model)
        return _http_backend(model, model.model, backend_url(model) or "", model.api_key)
    raise ConfigError(
        f"model {model.name!r}: provider {model.provider!r} is not available yet;"
        " use llamacpp, anthropic or an OpenAI-compatible endpoint (provider: openai,"
        " base_url: ...)"
    )


def _http_backend(
    model: ModelConfig, model_id: str, base_url: str, api_key: str | None
) -> HTTPProvider:
    """The provider of `model` (`model_id` at the backend) at one backend: `base_url`,
    with its key."""
    if model.provider == "anthropic":
        from farmhand.providers.anthropic import AnthropicProvider

        return AnthropicProvider(
            model=model_id,
            api_key=api_key,
            base_url=base_url,
            extra_params=dict(model.model_api_parameters) or None,
        )
    from farmhand.providers.openai_compat import OpenAICompatProvider
    from farmhand.providers.text_calls import rescue_family

    return OpenAICompatProvider(
        base_url=base_url,
        model=model_id,
        api_key=api_key,
        name=model.provider,
        extra_params=dict(model.model_api_parameters) or None,
        text_calls_family=rescue_family(model.tool_parser, model_id)
        if model.text_tool_calls
        else None,
    )


def _pool(model: ModelConfig, model_id: str) -> Provider:
    """One provider per deployment (its own key, else the model's), behind one pool."""
    from farmhand.providers.deployment_pool import CountingDeploymentPool, DeploymentPool

    members = [
        (_http_backend(model, model_id, d.base_url, d.api_key or model.api_key), d.weight)
        for d in model.deployments or []
    ]
    kind = CountingDeploymentPool if model.provider == "anthropic" else DeploymentPool
    return kind(model.provider, model.name, members)


def backend_urls(model: ModelConfig) -> list[str]:
    """Every URL `model`'s turns may be sent to: its deployments' base_urls, else its
    base_url or its provider's default; none for the embedded model."""
    if model.deployments:
        return [d.base_url for d in model.deployments]
    url = backend_url(model)
    return [] if url is None else [url]


def backend_url(model: ModelConfig) -> str | None:
    """Where `model`'s turns are sent: its base_url or its provider's default; None for the
    embedded model, which runs here."""
    if model.provider == "llamacpp":
        return None
    if model.provider == "anthropic":
        from farmhand.providers.anthropic import DEFAULT_BASE_URL

        return model.base_url or DEFAULT_BASE_URL
    return model.base_url or DEFAULT_BASE_URLS.get(model.provider)
