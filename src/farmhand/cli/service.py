"""The service under `farmhand chat`, `run` and `eval`: the same `ServiceState` that
`farmhand serve` runs, opened for one command. Its models load with the CLI's progress bars
and one sequence each (a server's have four), with no memory budget to refuse the one
model asked for; the model a command names may come from the catalog, a GGUF file
(`--model-path`) or carry another chat template (`--chat-template-file`)."""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from pathlib import Path

from farmhand.cli.loading import provider_with_progress
from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.config.template_files import with_template_file
from farmhand.providers.factory import provider_for
from farmhand.service.loaded_models import unbounded_models
from farmhand.service.state import ServiceState


def command_service(
    config: FarmhandConfig, *, progress: bool = True
) -> AbstractAsyncContextManager[ServiceState]:
    """The running service for one command (`async with`); `progress`: draw the bars."""

    load = provider_with_progress if progress else provider_for
    return ServiceState.open(config, provider_factory=load, models=unbounded_models())


def command_model(
    config: FarmhandConfig,
    name: str | None,
    *,
    model_path: Path | None = None,
    chat_template_file: Path | None = None,
) -> ModelConfig:
    """The model a command asked for: `name` from the config or the catalog (with
    `model_path`, the config's default model run from that file)."""
    model = config.model(None if model_path is not None else name, catalog=True)
    if model_path is not None:
        model = model.model_copy(update={"model_path": str(model_path)})
    if chat_template_file is not None:
        model = with_template_file(model, chat_template_file)
    return model
