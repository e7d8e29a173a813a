"""The `mcp:` section: the MCP servers models may use tools from, and how each is reached,
signed in to and trusted."""

from __future__ import annotations

from typing import Any, Literal, Self

from pydantic import Field, field_validator, model_validator

from farmhand.config.strict import Strict
from farmhand.config.urls import http_url

Transport = Literal["stdio", "http", "sse"]
TRANSPORT_ALIASES: dict[str, Transport] = {"streamable-http": "http"}
"""Other names people write for a transport (Ollama's MCP config says streamable-http)."""
ApprovalPolicy = Literal["never", "destructive", "always"]
ServerAuth = Literal["oauth"]


def transport_named(value: Any) -> Any:
    """The transport `value` names, aliases read (`TRANSPORT_ALIASES`); anything else as is,
    for the field's own check to refuse."""
    return TRANSPORT_ALIASES.get(value, value) if isinstance(value, str) else value


class McpServerConfig(Strict):
    """One MCP server that models may use tools from."""

    name: str = Field(min_length=1)
    """Unique server name; models refer to it in `mcp_servers`."""
    transport: Transport = "stdio"
    """How to reach the server: a local subprocess (stdio) or a URL (http, sse)."""
    command: str | None = None
    """Program that starts the server (stdio only)."""
    args: list[str] = []
    """Arguments for `command` (stdio only)."""
    env: dict[str, str] = {}
    """Extra environment variables for the server process (stdio only)."""
    base_url: str | None = None
    """URL of the server endpoint (http and sse only)."""
    headers: dict[str, str] = {}
    """HTTP headers sent with every request, e.g. Authorization (http and sse only)."""
    auth: ServerAuth | None = None
    """`oauth`: sign in to the server with OAuth 2.1 (http and sse only). `farmhand mcp
    login NAME` runs the browser flow once; the tokens are kept under FARMHAND_HOME and
    refreshed before they expire."""
    client_id: str | None = None
    """OAuth client id registered with the server's authorization server, or the https URL
    of a client metadata document. Unset: farmhand registers itself (dynamic registration)."""
    client_secret: str | None = None
    """The secret of a pre-registered confidential client (`client_id`); use ${env:...}."""
    scopes: list[str] = []
    """OAuth scopes to ask for beside those the server names."""
    callback_port: int | None = Field(default=None, ge=1, le=65535)
    """Port of the loopback redirect (http://127.0.0.1:PORT/callback) `farmhand mcp login`
    listens on; needed only when `client_id` was registered with a fixed port."""
    tool_timeout: float | None = Field(default=None, gt=0)
    """Seconds a tool call on this server may take; overrides runtime.tool_timeout."""
    allow_unsafe_command: bool = False
    """Allow a command farmhand refuses by default: a shell (sh, bash, zsh, ...), sudo/su,
    rm, dd, curl, wget or nc (stdio only). Set it only for a server you trust."""
    require_approval: ApprovalPolicy = "never"
    """Ask the user before a tool of this server runs: never; destructive (tools that may
    destroy or overwrite: per MCP's hints, a tool not marked readOnlyHint whose
    destructiveHint is not false, unannotated tools included); or always. `farmhand chat`
    and `run` ask in the terminal, the HTTP API pauses and asks its client; where no one
    can answer, the call is not run and the model is told so."""
    trust_when_named: bool = False
    """When a request names this server in its `mcp_servers` (rather than the model
    listing it), offer all its tools and leave its processes out of
    server.request_servers.max_alive; by default it is held to the rules of a request's
    own servers (read-only tools unless allow_writes, counted in max_alive)."""
    description: str = ""
    """What the server is for, in a few words: shown by `farmhand tools list`, and matched
    by `mcp_discover` patterns (a pattern that matches it finds all the server's tools)."""
    capabilities: list[str] = []
    """Tags for what the server can do (e.g. files, git, sql): shown and matched like
    `description`."""

    @field_validator("transport", mode="before")
    @classmethod
    def _transport_alias(cls, value: Any) -> Any:
        return transport_named(value)

    @model_validator(mode="after")
    def _transport_needs(self) -> Self:
        if self.transport == "stdio" and not self.command:
            hint = " (or set transport: http to use base_url)" if self.base_url else ""
            raise ValueError(
                f"stdio server {self.name!r} needs a command; add `command: <program>`{hint}"
            )
        if self.transport in ("http", "sse"):
            if not self.base_url:
                raise ValueError(
                    f"{self.transport} server {self.name!r} needs a URL;"
                    " add `base_url: https://host/mcp`"
                )
            http_url(self.base_url, f" of server {self.name!r}")
        self._auth_fits()
        return self

    def _auth_fits(self) -> None:
        oauth_only = [
            key
            for key in ("client_id", "client_secret", "scopes", "callback_port")
            if getattr(self, key)
        ]
        if self.auth is None and oauth_only:
            raise ValueError(
                f"server {self.name!r} sets {', '.join(oauth_only)} without `auth: oauth`;"
                " add `auth: oauth` or remove them"
            )
        if self.auth is None:
            return
        if self.transport == "stdio":
            raise ValueError(
                f"stdio server {self.name!r} cannot use `auth: oauth` (it is for http and sse"
                " servers); remove it, or pass a token through `env`"
            )
        if any(key.lower() == "authorization" for key in self.headers):
            raise ValueError(
                f"server {self.name!r} has both `auth: oauth` and an Authorization header;"
                " keep one of them"
            )
        if self.client_secret and not self.client_id:
            raise ValueError(f"server {self.name!r} sets client_secret without client_id")


class McpConfig(Strict):
    """The Model Context Protocol client section."""

    servers: list[McpServerConfig] = []
    """MCP servers available to the project."""
