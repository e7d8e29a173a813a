"""MCP server definitions: which servers exist and when `--tools PATH` turns them on.

Read from `~/.config/farmhand/mcp-servers.json` (`$XDG_CONFIG_HOME` respected), or from the
`FARMHAND_MCP_SERVERS` environment variable (else the Ollama fork's `OLLAMA_MCP_SERVERS`)
holding the same JSON inline, which wins. The
layout and field names are the Ollama MCP design's:

    {"servers": [{"name": "git", "command": "mcp-server-git", "args": ["--repository"],
                  "requires_path": true, "auto_enable": "if_match",
                  "enable_if": {"file_exists": ".git"}}]}

auto_enable: never (only when named), always (whenever --tools is used), with_path (when
--tools names a path), if_match (when every `enable_if` condition holds: `file_exists`
inside the path, `env_set` a non-empty environment variable). Built-in definitions for
filesystem and git ship by default; an entry of the same name in the file replaces one.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import Field, ValidationError, field_validator, model_validator

from farmhand.config.models import (
    McpServerConfig,
    Transport,
    format_path,
    transport_named,
)
from farmhand.config.strict import Strict
from farmhand.errors import ConfigError, ToolServerError
from farmhand.toolsets.mcp.known_servers import (
    FILESYSTEM_BIN,
    FILESYSTEM_PACKAGE,
    find_node_server,
)

ENV_VAR = "FARMHAND_MCP_SERVERS"
OLLAMA_ENV_VAR = "OLLAMA_MCP_SERVERS"
"""The Ollama MCP fork's name for the same JSON, read when farmhand's own is unset."""
AutoEnable = Literal["never", "always", "with_path", "if_match"]


class EnableIf(Strict):
    """Conditions for `auto_enable: if_match`; all that are set must hold."""

    file_exists: str | None = None
    """A file or folder that must exist inside the --tools path (e.g. ".git")."""
    env_set: str | None = None
    """An environment variable that must be set and non-empty."""


class ServerDefinition(Strict):
    """One server farmhand knows how to start, and when to start it on its own."""

    name: str
    description: str = ""
    """What the server is for: shown by `farmhand tools list`, matched by `mcp_discover`."""
    command: str | None = None
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    transport: Transport = "stdio"
    url: str | None = None
    headers: dict[str, str] = Field(default_factory=dict)
    requires_path: bool = False
    """The --tools path is inserted into `args` at `path_arg_index`."""
    path_arg_index: int = -1
    """Where the path goes in `args`; -1 appends it."""
    capabilities: list[str] = Field(default_factory=list)
    """Tags such as "files" or "git": shown and matched like `description`."""
    auto_enable: AutoEnable = "never"
    enable_if: EnableIf = EnableIf()
    install_hint: str = ""
    """How to install `command` when it is missing (shown in the error)."""
    trust_when_named: bool = False
    """A request that names this server gets all its tools, outside request_servers.max_alive
    (by default it is held to the rules of a request's own servers)."""

    @field_validator("transport", mode="before")
    @classmethod
    def _transport_alias(cls, value: Any) -> Any:
        return transport_named(value)

    @model_validator(mode="after")
    def _transport_needs(self) -> Self:
        if self.transport == "stdio" and not self.command:
            raise ValueError("a stdio server needs `command`")
        if self.transport != "stdio" and not self.url:
            raise ValueError(f"a {self.transport} server needs `url`")
        if self.auto_enable == "if_match" and not (
            self.enable_if.file_exists or self.enable_if.env_set
        ):
            raise ValueError("auto_enable if_match needs `enable_if` with file_exists or env_set")
        return self

    def enabled_for(self, path: Path | None, environ: Mapping[str, str] = os.environ) -> bool:
        """Whether `--tools PATH` (or bare `--tools` when path is None) turns this server on."""
        if self.requires_path and path is None:
            return False
        if self.auto_enable == "always":
            return True
        if self.auto_enable == "with_path":
            return path is not None
        if self.auto_enable == "if_match":
            condition = self.enable_if
            if condition.file_exists and (
                path is None or not (path / condition.file_exists).exists()
            ):
                return False
            return not condition.env_set or bool(environ.get(condition.env_set))
        return False

    def to_config(self, path: Path | None = None) -> McpServerConfig:
        """The server config, with the path in its arguments and its command found;
        ToolServerError (saying how to install it) when the command is not installed."""
        args = list(self.args)
        if self.requires_path and path is not None:
            index = len(args) if self.path_arg_index < 0 else self.path_arg_index
            args.insert(min(index, len(args)), str(path.resolve()))
        command = self._resolved_command() if self.transport == "stdio" else None
        return McpServerConfig(
            name=self.name,
            description=self.description,
            capabilities=list(self.capabilities),
            transport=self.transport,
            command=command,
            args=args,
            env=dict(self.env),
            base_url=self.url,
            headers=dict(self.headers),
            trust_when_named=self.trust_when_named,
        )

    def _resolved_command(self) -> str:
        assert self.command is not None  # checked by the validator
        if self.command == FILESYSTEM_BIN:
            return find_node_server(FILESYSTEM_BIN, FILESYSTEM_PACKAGE)
        if os.sep in self.command or shutil.which(self.command):
            return self.command
        # Python servers installed beside farmhand (`pip install mcp-server-git` into its
        # venv) are found even when that venv is not activated.
        if found := shutil.which(self.command, path=str(Path(sys.executable).parent)):
            return found
        hint = self.install_hint or f"install it, or fix `command` in {definitions_path()}"
        raise ToolServerError(
            f"MCP server {self.name!r}: command {self.command!r} is not installed; {hint}"
        )


BUILTIN_DEFINITIONS = (
    ServerDefinition(
        name="filesystem",
        description="Read files and folders",
        command=FILESYSTEM_BIN,
        requires_path=True,
        capabilities=["files"],
        auto_enable="with_path",
    ),
    ServerDefinition(
        name="git",
        description="Git repository history, status and diffs",
        command="mcp-server-git",
        args=["--repository"],
        requires_path=True,
        capabilities=["git"],
        auto_enable="if_match",
        enable_if=EnableIf(file_exists=".git"),
        install_hint="run `pip install mcp-server-git` (or `uv tool install mcp-server-git`)",
    ),
)


def definitions_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "farmhand" / "mcp-servers.json"


def load_definitions(
    environ: Mapping[str, str] = os.environ, path: Path | None = None
) -> list[ServerDefinition]:
    """The built-in definitions, replaced or extended by the user's (env var, else file)."""
    named = next((v for v in (ENV_VAR, OLLAMA_ENV_VAR) if environ.get(v, "").strip()), None)
    if named is not None:
        user = parse_definitions(environ[named].strip(), f"${named}")
    else:
        file = path or definitions_path()
        user = (
            parse_definitions(file.read_text(encoding="utf-8"), str(file)) if file.is_file() else []
        )
    merged = {d.name: d for d in BUILTIN_DEFINITIONS}
    merged.update((d.name, d) for d in user)
    return list(merged.values())


def parse_definitions(text: str, source: str) -> list[ServerDefinition]:
    """Definitions from JSON (`{"servers": [...]}` or a bare list); ConfigError naming the
    source, the entry and the field when something is wrong."""
    try:
        data: Any = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{source}: not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    entries = data.get("servers") if isinstance(data, dict) else data
    if not isinstance(entries, list):
        raise ConfigError(f'{source}: expected {{"servers": [...]}}, a list of server definitions')
    definitions: list[ServerDefinition] = []
    for index, entry in enumerate(entries):
        label = f"servers[{index}]"
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            label += f" ({entry['name']!r})"
        try:
            definitions.append(ServerDefinition.model_validate(entry))
        except ValidationError as exc:
            error = exc.errors()[0]
            where = f".{format_path(tuple(error['loc']))}" if error["loc"] else ""
            message = str(error["msg"]).removeprefix("Value error, ")
            raise ConfigError(f"{source}: {label}{where}: {message}") from None
        if any(d.name == definitions[-1].name for d in definitions[:-1]):
            raise ConfigError(f"{source}: {label}: the name is used twice; names must be unique")
    return definitions


def auto_enabled(
    path: Path | None,
    definitions: Sequence[ServerDefinition],
    environ: Mapping[str, str] = os.environ,
) -> tuple[list[McpServerConfig], list[str]]:
    """The servers `--tools PATH` turns on, and a note for each that should be on but whose
    command is not installed (it is skipped, so one missing server never blocks the rest)."""
    configs: list[McpServerConfig] = []
    skipped: list[str] = []
    for definition in definitions:
        if not definition.enabled_for(path, environ):
            continue
        try:
            configs.append(definition.to_config(path))
        except ToolServerError as exc:
            skipped.append(str(exc))
    return configs, skipped
