"""farmhand's configuration: farmhand.yaml in LlamaFarm's llamafarm.yaml layout.

`load_config(find_config(path))` gives a validated `FarmhandConfig`; every error names the
file, the line and the key path.
"""

from farmhand.config.env import expand_env, is_secret_name, mask_secrets
from farmhand.config.loader import CONFIG_FILENAME, find_config, load_config, parse_config
from farmhand.config.models import (
    DEFAULT_MODEL_NAME,
    FarmhandConfig,
    InlineToolConfig,
    Issue,
    McpConfig,
    McpServerConfig,
    ModelConfig,
    PromptConfig,
    PromptMessage,
    RuntimeConfig,
    default_config,
    embedded_default_model,
)

__all__ = [
    "CONFIG_FILENAME",
    "DEFAULT_MODEL_NAME",
    "FarmhandConfig",
    "InlineToolConfig",
    "Issue",
    "McpConfig",
    "McpServerConfig",
    "ModelConfig",
    "PromptConfig",
    "PromptMessage",
    "RuntimeConfig",
    "default_config",
    "embedded_default_model",
    "expand_env",
    "find_config",
    "is_secret_name",
    "load_config",
    "mask_secrets",
    "parse_config",
]
