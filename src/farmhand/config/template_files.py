"""A model made to render its turns with a template file (`--chat-template-file` of
`farmhand chat`, `run` and `serve`); the file is read and checked by `config.chat_template`.
"""

from __future__ import annotations

from pathlib import Path

from farmhand.config.chat_template import read_template_file
from farmhand.config.models import FarmhandConfig, ModelConfig
from farmhand.errors import ConfigError


def with_template_file(model: ModelConfig, path: Path) -> ModelConfig:
    """`model` rendering its turns with the template in `path` (`--chat-template-file`);
    ConfigError for a model whose template farmhand does not render, or a bad file."""
    if model.provider != "llamacpp":
        raise ConfigError(
            f"--chat-template-file applies to the embedded model; model {model.name!r} is"
            f" served by provider {model.provider}, which renders its own template"
        )
    text = read_template_file(path.expanduser().absolute())
    return model.model_copy(update={"chat_template": text})


def serve_with_template_file(config: FarmhandConfig, path: Path) -> FarmhandConfig:
    """`config` whose default model (the one a request gets when it names none) renders
    with the template in `path` (`farmhand serve --chat-template-file`)."""
    default = config.model()
    changed = with_template_file(default, path)
    models = [changed if m is default else m for m in config.runtime.models]
    if not any(m is default for m in config.runtime.models):
        models.append(changed)  # the built-in default, which no entry holds
    runtime = config.runtime.model_copy(update={"models": models})
    return config.model_copy(update={"runtime": runtime})
