"""What a server that comes from outside the operator's config may be: one policy, applied
before anything is started, read or reached.

Servers come from outside the config in an HTTP request's `mcp_servers` (any dialect), as a
request's `tools_path`, and in a project written through the API. The rules are allowlists,
set by the operator in `server:` (see `config.server.ServerConfig`):

- A request may always name a server the operator defined (`mcp.servers`, the definitions
  file) by name; that server runs exactly as the operator wrote it.
- A stdio server is refused unless `request_servers.stdio` is on, and then only when its
  command is one of `request_servers.launchers` (compared as resolved files, so a renamed
  or linked `env` is not `npx`), without inline-code flags (`-c`, `-e`, `--eval`, ...) or
  shell metacharacters, with path arguments inside `allowed_dirs`, and with `env` names that
  cannot change how a program loads.
- An http/sse server is refused unless its host is in `request_servers.http_hosts`.
- A model backend (`base_url`) in a project written through the API is refused unless its
  host is in `backend_hosts` (a list of its own: a host that may serve MCP tools is not
  thereby one that may receive a client's chats and keys, nor the other way round).
- A folder (`tools_path`) must lie inside `allowed_dirs`, after symlinks and `..` resolve.

A refusal is a PolicyError (403) naming the switch that would allow it; a malformed request
(a missing command, a path that is not a folder) is a ConfigError (400). A chat's servers
are admitted all at once, before anything starts (`RequestPolicy.admit_chat` -> `ChatServers`,
sorted by the rules each runs under).
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from farmhand.config.models import McpServerConfig
from farmhand.config.server import ServerConfig
from farmhand.errors import ConfigError, PolicyError, RequestError, ToolServerError
from farmhand.toolsets.mcp.definitions import ServerDefinition
from farmhand.toolsets.mcp.known_servers import filesystem_server

ServerRequest = McpServerConfig | str
"""A server as a request brings it: a whole definition, or the name of the operator's."""
KnownServers = Mapping[str, McpServerConfig | ServerDefinition]
"""The operator's servers by name, which a request may name."""

# Flags with which an interpreter or launcher runs code given on its command line.
INLINE_CODE_FLAGS = frozenset(
    {
        "-c", "-e", "-p", "-r", "-x", "--eval", "--print", "--require", "--import",
        "--loader", "--experimental-loader", "--call", "--command", "--exec", "--node-options",
        "--interactive", "-i",
    }
)  # fmt: skip
# Single-dash clusters such as `-Bc` (python) or `-pe` (node, perl) hide those flags too.
_INLINE_IN_CLUSTER = re.compile(r"^-[A-Za-z]*[cepri]")
SHELL_METACHARACTERS = re.compile(r"[;&|`$<>(){}\[\]*?!~#\\\"'\n\r\t\x00]")
# Secrets a request may hand its server without the operator naming them.
SECRET_NAME = re.compile(r"^[A-Z][A-Z0-9_]*_(API_KEY|TOKEN|SECRET)$")
# Variables that change how a program is loaded or what it runs, whoever lists them.
LOADER_NAMES = frozenset(
    {
        "PATH", "HOME", "SHELL", "ENV", "IFS", "PS4", "TMPDIR", "BASH_ENV", "CDPATH",
        "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "NODE_OPTIONS", "NODE_PATH",
    }
)  # fmt: skip
LOADER_PREFIXES = (
    "LD_", "DYLD_", "NODE_", "NPM_CONFIG_", "PYTHON", "PERL5", "PERLLIB", "RUBY", "JAVA_",
    "_JAVA_", "BASH_FUNC", "GCONV", "LOCPATH", "MALLOC_", "GLIBC_", "GIT_", "UV_", "PIP_",
    "SSL_", "CURL_", "REQUESTS_CA", "XDG_",
)  # fmt: skip


@dataclass(frozen=True)
class RequestPolicy:
    """The operator's rules for servers and folders that come from requests."""

    stdio: bool = False
    launchers: tuple[str, ...] = ()
    env_names: frozenset[str] = frozenset()
    http_hosts: tuple[str, ...] = ()
    allowed_dirs: tuple[Path, ...] = ()
    allow_writes: bool = False
    max_servers: int = 10
    backend_hosts: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, server: ServerConfig) -> RequestPolicy:
        rules = server.request_servers
        return cls(
            stdio=rules.stdio,
            launchers=tuple(rules.launchers),
            env_names=frozenset(rules.env),
            http_hosts=_hosts(rules.http_hosts),
            allowed_dirs=tuple(Path(d).expanduser().resolve() for d in server.allowed_dirs),
            allow_writes=rules.allow_writes,
            max_servers=rules.max_per_request,
            backend_hosts=_hosts(server.backend_hosts),
        )

    # --- folders --------------------------------------------------------------------------

    def admit_dir(self, value: str | Path, what: str = "tools_path") -> Path:
        """The folder, resolved, if it lies inside an allowed directory."""
        path = self.admit_path(value, what)
        if not path.is_dir():
            raise ConfigError(f"{what} {str(value)!r} is not a folder; name an existing folder")
        return path

    def admit_path(self, value: str | Path, what: str) -> Path:
        """A file or folder a request names, resolved, if it lies inside an allowed
        directory (links and `..` resolved first)."""
        if not self.allowed_dirs:
            raise PolicyError(
                f"{what} is refused: this server lets no request choose a file or folder; the"
                " operator can allow folders with server.allowed_dirs"
            )
        path = Path(value).expanduser().resolve()
        if not any(path.is_relative_to(root) for root in self.allowed_dirs):
            raise PolicyError(
                f"{what} {str(value)!r} is outside the folders requests may use"
                f" ({', '.join(str(r) for r in self.allowed_dirs)}); use a folder inside them"
            )
        return path

    # --- a chat's servers, all at once ------------------------------------------------------

    def admit_chat(
        self,
        configured: Sequence[McpServerConfig],
        requested: Sequence[ServerRequest] = (),
        *,
        known: Callable[[], KnownServers],
        tools_path: Path | None = None,
        configured_outside: bool = False,
        own: Sequence[McpServerConfig] = (),
        own_folders: Sequence[McpServerConfig] = (),
    ) -> ChatServers:
        """Every server a chat (or a tool search, a call by hand) will use, sorted by the
        rules each runs under: nothing is started, read or reached before this returns.
        `configured`: the operator's for the model (a client's, held to these rules, when
        `configured_outside`: a project written through the API); `requested`: what the
        request brings or names (`known()`, the operator's by name, read only when it names
        one); `tools_path`: the request's folder; `own`, `own_folders`: what a local face adds
        for its user, trusted like the operator's. PolicyError (403) for what the operator
        did not allow, ConfigError (400) for what is malformed."""
        taken = {s.name for s in configured}
        clash = sorted(s.name for s in requested if not isinstance(s, str) and s.name in taken)
        if clash:
            raise RequestError(
                f"mcp_servers: {', '.join(clash)} is already a server of this model; rename it",
                param="mcp_servers",
            )
        requested = [s for s in requested if not (isinstance(s, str) and s in taken)]
        folder_path = self.admit_dir(tools_path) if tools_path is not None else None
        any_named = any(isinstance(s, str) for s in requested)
        named, brought = self.admit_servers(
            requested, known() if any_named else {}, folder=folder_path
        )
        if configured_outside:
            brought = [*(self.admit(s) for s in configured), *brought]
            configured = []
        names = [s.name for s in [*configured, *named, *brought]]
        folder = [filesystem_server(folder_path, _folder_name(names))] if folder_path else []
        # An operator's server that the request (not the model's config) chose runs under the
        # rules of a request's own servers, unless the operator trusts it when named.
        trusted = [s for s in named if s.trust_when_named]
        limited = [s for s in named if not s.trust_when_named]
        return ChatServers(
            [*configured, *trusted, *own], [*limited, *brought], [*folder, *own_folders]
        )

    # --- servers --------------------------------------------------------------------------

    def admit_servers(
        self,
        requested: Sequence[ServerRequest],
        known: KnownServers,
        *,
        folder: Path | None = None,
        param: str = "mcp_servers",
    ) -> tuple[list[McpServerConfig], list[McpServerConfig]]:
        """The servers a request may use: (the operator's, named by the request; those the
        request brought, admitted). `known`: the operator's servers by name; `folder`: the
        request's admitted tools_path, for a named definition that needs one."""
        if len(requested) > self.max_servers:
            raise PolicyError(
                f"{param} holds {len(requested)} servers; this server allows at most"
                f" {self.max_servers} per request (server.request_servers.max_per_request)"
            )
        named: list[McpServerConfig] = []
        brought: list[McpServerConfig] = []
        for item in requested:
            if isinstance(item, str):
                named.append(_named(item, known, folder, param))
            else:
                brought.append(self.admit(item))
        return named, brought

    def admit(self, server: McpServerConfig) -> McpServerConfig:
        """`server` if a request may start it; PolicyError (or ConfigError) otherwise."""
        if server.allow_unsafe_command:
            raise PolicyError(
                f"MCP server {server.name!r}: allow_unsafe_command can only be set in the"
                " operator's config file"
            )
        if server.auth is not None:
            # The operator's stored tokens must never follow a server a request describes.
            raise PolicyError(
                f"MCP server {server.name!r}: `auth: oauth` can only be set in the operator's"
                " config file; a request passes its own token in `headers` (or `authorization`)"
            )
        if server.transport == "stdio":
            self._admit_stdio(server)
        else:
            self._admit_url(server)
        return server

    def _admit_stdio(self, server: McpServerConfig) -> None:
        assert server.command is not None  # the config model requires it for stdio
        if not self.stdio:
            raise PolicyError(
                f"MCP server {server.name!r}: requests may not start programs on this server;"
                " name a server the operator defined instead, or the operator turns on"
                " server.request_servers.stdio and lists its launchers"
            )
        resolved = _resolve(server.command, server.name)
        allowed = {os.path.realpath(p) for p in _resolved_launchers(self.launchers)}
        if os.path.realpath(resolved) not in allowed:
            listed = ", ".join(self.launchers) or "none"
            raise PolicyError(
                f"MCP server {server.name!r}: {server.command!r} is not a launcher requests may"
                f" use (server.request_servers.launchers: {listed})"
            )
        for arg in server.args:
            flag = arg.split("=", 1)[0]
            if flag in INLINE_CODE_FLAGS or (
                not arg.startswith("--") and _INLINE_IN_CLUSTER.match(arg)
            ):
                raise PolicyError(
                    f"MCP server {server.name!r}: argument {arg!r} would run code written in"
                    " the request; define the server in the config file instead"
                )
            if SHELL_METACHARACTERS.search(arg):
                raise PolicyError(
                    f"MCP server {server.name!r}: argument {arg!r} contains shell"
                    " metacharacters, which servers from requests may not use"
                )
            path = _path_in(arg)
            if path is not None:
                self._admit_path_argument(path, arg, server.name)
        for name in server.env:
            self._admit_env(name, server.name)

    def _admit_path_argument(self, path: Path, arg: str, server: str) -> None:
        if not any(path.is_relative_to(root) for root in self.allowed_dirs):
            allowed = ", ".join(str(r) for r in self.allowed_dirs) or "none"
            raise PolicyError(
                f"MCP server {server!r}: path argument {arg!r} is outside the folders requests"
                f" may use (server.allowed_dirs: {allowed})"
            )

    def _admit_env(self, name: str, server: str) -> None:
        upper = name.upper()
        loads = upper in LOADER_NAMES or upper.startswith(LOADER_PREFIXES)
        if loads or not (name in self.env_names or SECRET_NAME.match(name)):
            why = (
                "it changes how programs load"
                if loads
                else "only names ending in _API_KEY, _TOKEN or _SECRET, or those in"
                " server.request_servers.env, are allowed"
            )
            raise PolicyError(f"MCP server {server!r}: env {name!r} is refused: {why}")

    def _admit_url(self, server: McpServerConfig) -> None:
        assert server.base_url is not None  # the config model requires it for http and sse
        host, port = _host_and_port(server.base_url, f"MCP server {server.name!r}")
        if not any(_host_matches(entry, host, port) for entry in self.http_hosts):
            listed = ", ".join(self.http_hosts) or "none"
            raise PolicyError(
                f"MCP server {server.name!r}: requests may not connect to {host!r}"
                f" (server.request_servers.http_hosts: {listed})"
            )

    # --- model backends -------------------------------------------------------------------

    def admit_backend(self, url: str, what: str) -> str:
        """`url` if a config a client wrote may send its model's turns there: an http(s)
        URL whose host is in `server.backend_hosts`; PolicyError (403) otherwise. The
        refusal names the host only, never whether anything answers there."""
        host, port = _host_and_port(url, what)
        if not any(_host_matches(entry, host, port) for entry in self.backend_hosts):
            listed = ", ".join(self.backend_hosts) or "none"
            raise PolicyError(
                f"{what}: a config written through the API may not send a model's turns to"
                f" {host!r} (server.backend_hosts: {listed}); use a backend the operator"
                " allows, or the embedded model"
            )
        return url


def _hosts(entries: Iterable[str]) -> tuple[str, ...]:
    return tuple(h.strip().lower() for h in entries if h.strip())


def known_servers(
    configured: Iterable[McpServerConfig], definitions: Iterable[ServerDefinition]
) -> dict[str, McpServerConfig | ServerDefinition]:
    """The operator's servers by name; the config's win over definitions of the same name."""
    known: dict[str, McpServerConfig | ServerDefinition] = {d.name: d for d in definitions}
    known.update((s.name, s) for s in configured)
    return known


def _named(
    name: str,
    known: KnownServers,
    folder: Path | None,
    param: str,
) -> McpServerConfig:
    found = known.get(name)
    if found is None:
        raise ConfigError(
            f"{param}: no server named {name!r} is defined on this server; defined:"
            f" {', '.join(sorted(known)) or 'none'}"
        )
    if isinstance(found, McpServerConfig):
        return found
    if found.requires_path and folder is None:
        raise ConfigError(f"{param}: server {name!r} works on a folder; send tools_path too")
    try:
        return found.to_config(folder)
    except ToolServerError as exc:
        raise ConfigError(str(exc)) from None


def _resolve(command: str, server: str) -> str:
    found = command if os.sep in command else shutil.which(command)
    if found is None or not os.path.isfile(found):
        raise ConfigError(
            f"MCP server {server!r}: command {command!r} was not found on this server;"
            " check its name"
        )
    return found


def _resolved_launchers(launchers: Iterable[str]) -> list[str]:
    return [found for name in launchers if (found := shutil.which(name)) is not None]


def _host_and_port(url: str, what: str) -> tuple[str, int]:
    """The host (lower case) and port `url` reaches; ConfigError (400) for a URL that is not
    an http(s) URL with a host (a port past 65535, `[::1`, `:47415:1`)."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise ConfigError(
            f"{what}: {url!r} is not a valid URL ({exc}); write it like http://host:8080/path"
        ) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"{what}: {url!r} must be an http:// or https:// URL with a host")
    return parts.hostname.lower(), port or (443 if parts.scheme == "https" else 80)


def _host_matches(entry: str, host: str, port: int) -> bool:
    name, _, entry_port = entry.partition(":") if not entry.startswith("[") else (entry, "", "")
    if entry_port and entry_port != str(port):
        return False
    if name.startswith("*."):
        return host.endswith(name[1:])
    return host == name


def _path_in(arg: str) -> Path | None:
    """The path an argument names, resolved; else None. A path is what looks like one
    (`/x`, `./x`, `~/x`, `--root=/x`, anything with a `..` step) or what exists as one
    relative to the working directory (`etc` when that is `/`)."""
    value = arg.split("=", 1)[1] if arg.startswith("-") and "=" in arg else arg
    if not value:
        return None
    steps = value.replace("\\", "/").split("/")
    looks_like_path = value.startswith(("/", "~", ".")) or ".." in steps
    if looks_like_path or Path(value).exists():
        return Path(value).expanduser().resolve()
    return None


@dataclass(frozen=True)
class ChatServers:
    """The MCP servers of one chat, admitted (`RequestPolicy.admit_chat`): the operator's
    (the model's, or named by the request and trusted when named) and a local face's own,
    those held to the rules of a request's own servers (brought by the request or a
    client's project, or the operator's named by the request), and the folder servers (the
    request's `tools_path`, a local face's `--tools PATH`)."""

    trusted: list[McpServerConfig]
    outside: list[McpServerConfig]
    folder: list[McpServerConfig]

    @property
    def all(self) -> list[McpServerConfig]:
        return [*self.trusted, *self.outside, *self.folder]


def _folder_name(taken: Sequence[str]) -> str:
    name = "filesystem"
    while name in taken:
        name = "_" + name
    return name
