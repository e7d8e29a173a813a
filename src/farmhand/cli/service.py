"""The service under `farmhand chat`, `run` and `eval`: the same `ServiceState` that
`farmhand serve` runs, opened for one command. Its models load with the CLI's progress bars
and one sequence each (a server's have four), with no memory budget to refuse the one
model asked for; the model a command names may come from the catalog, a GGUF file
(`--model-path`) or carry another chat template (`--chat-template-file`)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

from farmhand.cli.asking import TerminalAsker
from farmhand.cli.common import err_console
from farmhand.cli.loading import provider_with_progress
from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.config.template_files import with_template_file
from farmhand.providers.factory import provider_for
from farmhand.service.chat import ChatRequest, start_chat
from farmhand.service.loaded_models import unbounded_models
from farmhand.service.state import ServiceState


def command_service(
    config: FarmhandConfig, *, progress: bool = True
) -> AbstractAsyncContextManager[ServiceState]:
    """The running service for one command (`async with`); `progress`: draw the bars."""

    load = provider_with_progress if progress else provider_for
    return ServiceState.open(config, provider_factory=load, models=unbounded_models())


@asynccontextmanager
async def chat_service(config: FarmhandConfig, request: ChatRequest) -> AsyncIterator[ServiceState]:
    """The running service of `farmhand chat` and `run`, with the model of `request` loaded
    and its servers started: the model loads while they start (`start_chat`)."""
    async with command_service(config) as state:
        await start_chat(state, request)
        yield state


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


def command_chat(
    config: FarmhandConfig,
    name: str | None,
    *,
    model_path: Path | None,
    chat_template_file: Path | None,
    **fields: Any,
) -> ChatRequest:
    """The chat of `farmhand chat` or `run`: the model asked for (`command_model`), the
    terminal answering the servers' questions and approvals, and the request's other
    `fields` (`ChatRequest`'s)."""
    model = command_model(
        config, name, model_path=model_path, chat_template_file=chat_template_file
    )
    return ChatRequest(model=model, asker=TerminalAsker(err_console), **fields)
