"""The typed configuration: farmhand.yaml in LlamaFarm's llamafarm.yaml layout.

Every model forbids unknown keys, so a typo is an error rather than a silently ignored
setting. Checks that span sections (names that must exist, names that must be unique) live
in `FarmhandConfig.reference_issues()` so the loader can point each one at its own line.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, NamedTuple, Self

import jsonschema
from pydantic import (
    Field,
    PrivateAttr,
    ValidationInfo,
    field_validator,
    model_validator,
)

from farmhand.config.deployments import DeploymentConfig, deployments_problem
from farmhand.config.limits import SavedResultsConfig
from farmhand.config.mcp_servers import TRANSPORT_ALIASES as TRANSPORT_ALIASES
from farmhand.config.mcp_servers import ApprovalPolicy as ApprovalPolicy
from farmhand.config.mcp_servers import McpConfig as McpConfig
from farmhand.config.mcp_servers import McpServerConfig as McpServerConfig
from farmhand.config.mcp_servers import ServerAuth as ServerAuth
from farmhand.config.mcp_servers import Transport as Transport
from farmhand.config.mcp_servers import transport_named as transport_named
from farmhand.config.server import ServerConfig
from farmhand.config.strict import Strict
from farmhand.config.urls import http_url as http_url
from farmhand.errors import ConfigError, ModelError, RequestError
from farmhand.models.catalog import CATALOG, DEFAULT_MODEL, lookup
from farmhand.tools.definition import ToolDefinition

DEFAULT_MODEL_NAME = DEFAULT_MODEL
"""The catalog model the embedded llama.cpp provider runs when nothing else is configured."""

ProviderName = Literal["llamacpp", "openai", "ollama", "anthropic", "universal"]
KeyPath = tuple[str | int, ...]


COLLECTION_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
"""A RAG collection's name, also its file's name under $FARMHAND_HOME/rag."""


def check_collection_name(name: str) -> str:
    """`name` when it may name a collection; RequestError saying what may."""
    if not isinstance(name, str) or not COLLECTION_NAME.fullmatch(name):
        raise RequestError(
            f"{name!r} is not a collection name: use 1 to 64 letters, digits, '_', '.' or"
            " '-', starting with a letter or digit",
            param="collection",
        )
    return name


class Issue(NamedTuple):
    """One problem found in a config, located by its key path."""

    path: KeyPath
    message: str
    line: int | None = None
    """Set when the path alone cannot locate the problem (e.g. a repeated YAML key)."""


def format_path(path: KeyPath) -> str:
    """`("mcp", "servers", 0, "name")` -> `mcp.servers[0].name`."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def is_inside(path: Path, folders: tuple[Path, ...]) -> bool:
    """Whether `path`, with symlinks and `..` resolved, lies inside one of `folders`."""
    resolved = path.expanduser().resolve()
    return any(resolved.is_relative_to(folder) for folder in folders)


def outside_folders_message(allowed: tuple[Path, ...]) -> str:
    listed = ", ".join(str(d) for d in allowed) or "none"
    return (
        "a config written through the API may only name files inside the folders the"
        f" operator allows (server.allowed_dirs: {listed})"
    )


def _confined(path: Path, allowed: tuple[Path, ...]) -> None:
    if not is_inside(path, allowed):
        raise ConfigError(f"{path}: {outside_folders_message(allowed)}")


class InlineToolConfig(Strict):
    """A tool declared in the config; calls to it are returned to the client to run."""

    type: Literal["function"] = "function"
    """Always "function" (OpenAI's tool type)."""
    name: str = Field(min_length=1)
    """Tool name the model calls, e.g. `cli.dataset_upload`."""
    description: str = ""
    """What the tool does, shown to the model."""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    """JSON Schema of the arguments; must have `type: object`."""

    @model_validator(mode="before")
    @classmethod
    def _flatten_openai_form(cls, data: Any) -> Any:
        # OpenAI nests the fields under "function"; LlamaFarm writes them flat. Take both.
        if isinstance(data, dict) and isinstance(data.get("function"), dict):
            rest = {k: v for k, v in data.items() if k != "function"}
            return {**rest, **data["function"]}
        return data

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, schema: dict[str, Any]) -> dict[str, Any]:
        if schema.get("type") != "object":
            raise ValueError("parameters must be a JSON Schema with `type: object` at the top")
        try:
            jsonschema.validators.validator_for(schema).check_schema(schema)
        except jsonschema.SchemaError as exc:
            where = format_path(("parameters", *exc.path))
            raise ValueError(f"not a valid JSON Schema at {where}: {exc.message}") from None
        return schema

    def definition(self) -> ToolDefinition:
        return ToolDefinition(self.name, self.description, dict(self.parameters))


class PromptMessage(Strict):
    """One message of a named prompt."""

    role: Literal["system", "user", "assistant"]
    """Who says it."""
    content: str
    """The text."""


class PromptConfig(Strict):
    """A named list of messages that models can include by name."""

    name: str = Field(min_length=1)
    """Unique prompt name; models refer to it in `prompts`."""
    messages: list[PromptMessage] = []
    """The messages, in order."""


class ModelConfig(Strict):
    """One model farmhand can run, with the tools and prompts it gets."""

    name: str = Field(min_length=1)
    """Unique name used to pick this model (`--model`, the API's `model` field)."""
    provider: ProviderName = "llamacpp"
    """Backend: llamacpp (embedded, alias "embedded"), openai, ollama, anthropic, universal."""
    model: str | None = None
    """For llamacpp a catalog name like "qwen2.5-coder:0.5b"; otherwise the backend's model id."""
    model_path: str | None = None
    """A local .gguf file (llamacpp only); relative paths are relative to the config file."""
    base_url: str | None = None
    """Endpoint of the backend, e.g. http://localhost:11434 for Ollama."""
    deployments: list[DeploymentConfig] | None = None
    """Several backends serving this model (openai, ollama, anthropic): each turn goes to
    the one with the fewest requests in flight, failing ones are cooled down and retried
    later; instead of base_url. See docs/config.md, Deployments."""
    api_key: str | None = None
    """Credential for the backend (and every deployment that names none); write it as
    ${env:VAR} to keep it out of the file."""
    tool_call_strategy: Literal["native_api", "prompt_based"] = "native_api"
    """native_api: the backend's own tool calling; prompt_based: tools described in the prompt."""
    tool_parser: str | None = None
    """Tool-call format to read from the model's output (e.g. hermes_2_pro, llama3_x,
    mistral_nemo, or auto: derived from the model's chat template); detected from the chat
    template or model name when omitted."""
    chat_template: str | None = None
    """Embedded model: the chat template to use instead of the one in its GGUF, as llama.cpp's
    `--chat-template-file` does (for a model whose own template does not offer tools, say):
    a value with `{{` or `{%` in it is the Jinja text itself; anything else is the path of a
    file holding it (`file://` optional; relative to this config file), which must exist.
    The tool-call format is detected from this template; `farmhand chat`, `run` and `serve`
    take `--chat-template-file` to set it for one run."""
    text_tool_calls: bool = True
    """OpenAI-compatible and Ollama backends: read tool calls the model wrote as text in its
    reply (in the markup of `tool_parser`, else of the family its name suggests) when the
    server did not return them as tool_calls."""
    constrained: bool = False
    """Embedded model: constrain every turn that offers tools with a grammar built from the
    tool schemas (turns with tool_choice required or a named tool always are)."""
    prefix_cache: bool = True
    """Embedded model: save the KV state of the prompt's head (system prompt and tools) under
    $FARMHAND_HOME/kv/ and restore it in the next run, which then processes only the rest."""
    grounding: bool = True
    """Embedded model: drop tool calls whose values the user never wrote (a further call in a
    turn, and a first question's call with under half of its required values grounded,
    which is then answered in text, or with any ungrounded when its tool shares no word
    with the question) and optional arguments whose values nobody wrote (the tool's default
    applies); and push for another call while the question lists values the calls have not
    used; see providers/llamacpp/grounding.py, relevance.py and siblings.py."""
    mcp_servers: list[str] | None = None
    """MCP servers this model may use: omitted = all, [] = none, a list = only those."""
    tools: list[InlineToolConfig] = []
    """Inline tools, merged with the MCP tools: a list (OpenAI, LlamaFarm, Anthropic, Bedrock
    or Google format), or `file://tools.json|yaml` relative to this config file."""
    prompts: list[str] = []
    """Names of top-level prompts whose messages this model gets, in order."""
    rag: list[str] = []
    """Document collections (`farmhand rag add PATH --collection NAME`) this model may
    search with the built-in `rag_query` tool."""
    n_ctx: int | None = Field(default=None, ge=1)
    """Context window in tokens (llamacpp); the model's own default when omitted."""
    n_parallel: int | None = Field(default=None, ge=1, le=64)
    """Requests the embedded model answers at once, stepped together by one decode
    (continuous batching; each gets n_ctx of context). 1: one at a time. When omitted: 4
    under `farmhand serve` (a server shares the model between clients), 1 in `chat`, `run`
    and `eval` (one user at a time)."""
    temperature: float | None = Field(default=None, ge=0)
    """Sampling temperature; the backend's default when omitted."""
    max_tokens: int | None = Field(default=None, ge=1)
    """Upper bound on generated tokens per model turn."""
    description: str | None = None
    """What this model is for, shown in model listings."""
    default: bool = False
    """Use this model when none is named and runtime.default_model is not set."""
    model_api_parameters: dict[str, Any] = {}
    """Extra request parameters passed through to the backend unchanged."""

    @field_validator("tools", mode="before")
    @classmethod
    def _tools_in_any_format(cls, value: Any, info: ValidationInfo) -> Any:
        from farmhand.tools.formats.detect import to_openai_dicts
        from farmhand.tools.loading import load_tools, resolve_tool_path

        base_dir = (info.context or {}).get("base_dir")
        confine = (info.context or {}).get("confine")
        try:
            if isinstance(value, str):
                if confine is not None:
                    _confined(resolve_tool_path(value, base_dir), confine)
                return [tool.to_openai() for tool in load_tools(value, base_dir=base_dir)]
            if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
                return to_openai_dicts(value)
        except ConfigError as exc:
            raise ValueError(str(exc)) from None
        return value

    @field_validator("chat_template")
    @classmethod
    def _chat_template_source(cls, value: str | None, info: ValidationInfo) -> str | None:
        from farmhand.config.chat_template import checked_source

        if value is None:
            return None
        context = info.context or {}
        allowed = context.get("confine")
        confine = None if allowed is None else (lambda path: _confined(path, allowed))
        return checked_source(value, context.get("base_dir"), confine)

    @field_validator("rag")
    @classmethod
    def _collection_names(cls, names: list[str]) -> list[str]:
        for name in names:
            try:
                check_collection_name(name)
            except RequestError as exc:
                raise ValueError(str(exc)) from None
        return names

    @field_validator("provider", mode="before")
    @classmethod
    def _provider_alias(cls, value: Any) -> Any:
        return "llamacpp" if value == "embedded" else value

    @field_validator("base_url")
    @classmethod
    def _backend_url(cls, value: str | None) -> str | None:
        return value if value is None else http_url(value)

    @model_validator(mode="after")
    def _model_source(self) -> Self:
        if problem := deployments_problem(self.provider, self.base_url, self.deployments):
            raise ValueError(problem)
        if self.provider == "llamacpp":
            if self.model is None and self.model_path is None:
                self.model = DEFAULT_MODEL_NAME
        elif self.chat_template is not None:
            raise ValueError(
                "chat_template is only for provider llamacpp (the embedded model, whose"
                f" template farmhand renders); provider {self.provider!r} renders its own"
            )
        elif self.model_path is not None:
            raise ValueError(
                f"model_path is only for provider llamacpp; for provider {self.provider!r}"
                " name the model with `model:`"
            )
        elif not self.model:
            raise ValueError(f"provider {self.provider!r} needs a model id; add `model: <id>`")
        return self

    def tool_definitions(self) -> list[ToolDefinition]:
        """The inline tools, in OpenAI's shape."""
        return [tool.definition() for tool in self.tools]


def embedded_default_model() -> ModelConfig:
    """The model used when the config names none: the embedded llama.cpp default."""
    return ModelConfig(name="default", provider="llamacpp", model=DEFAULT_MODEL_NAME)


class RuntimeConfig(Strict):
    """Models and the limits of the tool loop."""

    default_model: str | None = None
    """Model used when a request names none; else the one with `default: true`, else the first."""
    models: list[ModelConfig] = []
    """The models; with none, the embedded default model is used."""
    max_tool_rounds: int = Field(default=10, ge=1)
    """How many model turns with tool calls a single request may take."""
    tool_timeout: float = Field(default=30.0, gt=0)
    """Seconds one tool call may take (servers can override with their own tool_timeout)."""
    max_tool_result_chars: int = Field(default=20000, ge=200)
    """Longest tool result the model sees; longer ones keep their head and tail, and the full
    text is saved under $FARMHAND_HOME/results/ (the cut result says where)."""
    jit_tools: bool = False
    """Just-in-time discovery: the model first sees only `mcp_discover(pattern)` and gets the
    matching tools injected, instead of every tool of every server up front."""
    jit_max_tools: int = Field(default=5, ge=1)
    """Most tools one `mcp_discover` call injects (the most relevant ones)."""
    jit_connect_eager: bool = False
    """With jit_tools: start every MCP server up front instead of at the first discovery."""
    saved_results: SavedResultsConfig = Field(default_factory=SavedResultsConfig)
    """How much of the cut results' full text is kept on disk, and for how long."""


class LlamaServerConfig(Strict):
    """llama.cpp's llama-server, driven by the llama_* MCP tools on farmhand serve's /mcp
    (and `farmhand mcp serve`); the section's presence turns the tools on."""

    url: str | None = None
    """Its URL; default $LLAMA_SERVER_URL, else http://127.0.0.1:8080."""
    timeout: int | None = Field(default=None, gt=0)
    """Request timeout in milliseconds; default $LLAMA_SERVER_TIMEOUT, else 30000."""
    api_key: str | None = None
    """Sent as `Authorization: Bearer <key>`; default $LLAMA_API_KEY."""
    allow_extra_args: bool = False
    """Let llama_start pass `extra_args` to llama-server when it is called over HTTP (/mcp);
    some flags write files. Its model must lie inside server.allowed_dirs there."""

    @field_validator("url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"{value!r} must start with http:// or https://")
        return value


class FarmhandConfig(Strict):
    """A whole farmhand.yaml (or llamafarm.yaml)."""

    version: str = "v1"
    """Config format version."""
    name: str | None = None
    """Project name."""
    namespace: str = "default"
    """Project namespace."""
    mcp: McpConfig = Field(default_factory=McpConfig)
    """MCP client settings."""
    runtime: RuntimeConfig = Field(default_factory=RuntimeConfig)
    """Models and tool-loop limits."""
    prompts: list[PromptConfig] = []
    """Named prompts that models include by name."""
    server: ServerConfig = Field(default_factory=ServerConfig)
    """`farmhand serve` settings (API keys)."""
    llama_server: LlamaServerConfig | None = None
    """A llama-server for the llama_* MCP tools; omitted, the tools are not offered."""
    # LlamaFarm sections farmhand does not use; accepted so a real llamafarm.yaml loads.
    rag: Any = None
    """LlamaFarm RAG settings (ignored by farmhand)."""
    datasets: Any = None
    """LlamaFarm datasets (ignored by farmhand)."""
    components: Any = None
    """LlamaFarm reusable RAG components (ignored by farmhand)."""
    voice: Any = None
    """LlamaFarm voice chat settings (ignored by farmhand)."""
    agents: Any = None
    """LlamaFarm agent definitions (ignored by farmhand)."""
    nodes: Any = None
    """LlamaFarm multi-node settings (ignored by farmhand)."""
    router: Any = None
    """LlamaFarm semantic router settings (ignored by farmhand)."""

    _source: Path | None = PrivateAttr(default=None)

    @property
    def source(self) -> Path | None:
        """The file this config was loaded from, if any."""
        return self._source

    def loaded_from(self, path: Path) -> Self:
        """This config, noting the file it was read from (`source`)."""
        self._source = path
        return self

    @model_validator(mode="after")
    def _check_references(self, info: ValidationInfo) -> Self:
        # The loader asks to run these itself so each issue gets its own line number.
        if info.context and info.context.get("defer_reference_checks"):
            return self
        issues = self.reference_issues()
        if issues:
            raise ValueError("; ".join(f"{format_path(i.path)}: {i.message}" for i in issues))
        return self

    def reference_issues(self) -> list[Issue]:
        """Duplicate names and names that refer to nothing, each at its own key path."""
        issues: list[Issue] = []
        servers = _Names(self.mcp.servers, ("mcp", "servers"), "MCP server", issues)
        models = _Names(self.runtime.models, ("runtime", "models"), "model", issues)
        prompts = _Names(self.prompts, ("prompts",), "prompt", issues)
        if self.runtime.default_model is not None:
            models.check(self.runtime.default_model, ("runtime", "default_model"))
        marked = [i for i, m in enumerate(self.runtime.models) if m.default]
        for i in marked[1:]:
            first = self.runtime.models[marked[0]].name
            issues.append(
                Issue(
                    ("runtime", "models", i, "default"),
                    f"model {first!r} is already the default; set `default: true` on one only",
                )
            )
        for i, model in enumerate(self.runtime.models):
            here = ("runtime", "models", i)
            for j, server in enumerate(model.mcp_servers or []):
                servers.check(server, (*here, "mcp_servers", j))
            for j, prompt in enumerate(model.prompts):
                prompts.check(prompt, (*here, "prompts", j))
            _Names(model.tools, (*here, "tools"), "tool", issues)
        return issues

    def model(self, name: str | None = None, *, catalog: bool = False) -> ModelConfig:
        """The named model; with no name, default_model, else `default: true`, else the first.
        `catalog`: a name no model has may name a catalog model, run embedded (the CLI's
        `-m`; a request over HTTP may only name the configured models)."""
        models = self.runtime.models
        if name is None:
            name = self.runtime.default_model
            if name is None:
                marked = [m for m in models if m.default]
                if marked or models:
                    return (marked or models)[0]
                return embedded_default_model()
        for model in models:
            if model.name == name:
                return model
        if not models and name == "default":
            return embedded_default_model()
        names = [m.name for m in models] or ["default"]
        if catalog:
            try:
                return ModelConfig(name=name, provider="llamacpp", model=lookup(name).name)
            except ModelError:
                names += CATALOG
        raise ConfigError(f"unknown model {name!r}; available models: {', '.join(names)}")

    def servers_for(self, model: ModelConfig) -> list[McpServerConfig]:
        """The MCP servers `model` may use: all, none, or the ones it lists (in its order)."""
        if model.mcp_servers is None:
            return list(self.mcp.servers)
        by_name = {s.name: s for s in self.mcp.servers}
        for name in model.mcp_servers:
            if name not in by_name:
                known = ", ".join(by_name) or "none"
                raise ConfigError(
                    f"model {model.name!r} names unknown MCP server {name!r}; defined: {known}"
                )
        return [by_name[n] for n in model.mcp_servers]

    def system_prompt(self, model: ModelConfig) -> str | None:
        """The system messages of the model's prompts (or of prompt "default"), joined."""
        by_name = {p.name: p for p in self.prompts}
        names = model.prompts or (["default"] if "default" in by_name else [])
        parts = [
            m.content.strip()
            for n in names
            if n in by_name
            for m in by_name[n].messages
            if m.role == "system" and m.content.strip()
        ]
        return "\n\n".join(parts) or None


def default_config() -> FarmhandConfig:
    """The config used when there is no file: no MCP servers, the embedded default model."""
    return FarmhandConfig(runtime=RuntimeConfig(models=[embedded_default_model()]))


class _Names:
    """The names of one list of entries; reports duplicates and checks references to them."""

    def __init__(self, entries: Sequence[Any], where: KeyPath, what: str, issues: list[Issue]):
        self.what, self.section, self.issues = what, format_path(where), issues
        self.index: dict[str, int] = {}
        for i, entry in enumerate(entries):
            if entry.name in self.index:
                was = format_path((*where, self.index[entry.name]))
                message = f"duplicate {what} name {entry.name!r} (also {was}); rename one"
                issues.append(Issue((*where, i, "name"), message))
            else:
                self.index[entry.name] = i

    def check(self, name: str, path: KeyPath) -> None:
        if name in self.index:
            return
        if self.index:
            known = f"defined in {self.section}: {', '.join(self.index)}"
        else:
            known = f"{self.section} is empty; define it there or drop this reference"
        self.issues.append(Issue(path, f"unknown {self.what} {name!r}; {known}"))
