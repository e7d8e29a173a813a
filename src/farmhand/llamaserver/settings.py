"""Where the llama_* tools find llama-server, and how long they wait for it.

The environment variables are llama-mcp-server's, so a Claude Desktop entry written for it
works unchanged with `farmhand mcp llama`:

    LLAMA_SERVER_URL       http://127.0.0.1:8080
    LLAMA_SERVER_TIMEOUT   30000 (milliseconds, for every request but llama_health's 5 s)
    LLAMA_API_KEY          sent as `Authorization: Bearer <key>` when set
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from farmhand.errors import ConfigError

DEFAULT_URL = "http://127.0.0.1:8080"
DEFAULT_TIMEOUT_MS = 30_000
HEALTH_TIMEOUT_MS = 5_000


@dataclass(frozen=True)
class LlamaServerSettings:
    """How to reach one llama-server."""

    url: str = DEFAULT_URL
    timeout_ms: int = DEFAULT_TIMEOUT_MS
    api_key: str | None = None

    def __post_init__(self) -> None:
        parts = urlsplit(self.url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(
                f"llama-server URL {self.url!r} is not an http(s) URL;"
                " set LLAMA_SERVER_URL (or llama_server.url) to e.g. http://127.0.0.1:8080"
            )
        if self.timeout_ms <= 0:
            raise ConfigError(
                f"llama-server timeout must be a positive number of milliseconds,"
                f" not {self.timeout_ms}; set LLAMA_SERVER_TIMEOUT to e.g. 30000"
            )
        object.__setattr__(self, "url", self.url.rstrip("/"))

    @property
    def port(self) -> int:
        parts = urlsplit(self.url)
        return parts.port or (443 if parts.scheme == "https" else 80)

    def overridden(
        self, *, url: str | None = None, timeout_ms: int | None = None, api_key: str | None = None
    ) -> LlamaServerSettings:
        """These settings with the given values in place of theirs (None keeps theirs)."""
        return LlamaServerSettings(
            url=url or self.url,
            timeout_ms=timeout_ms or self.timeout_ms,
            api_key=api_key or self.api_key,
        )

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> LlamaServerSettings:
        """The settings the LLAMA_* variables give (defaults for the unset ones)."""
        env = os.environ if environ is None else environ
        raw_timeout = env.get("LLAMA_SERVER_TIMEOUT", "").strip()
        try:
            timeout = int(raw_timeout) if raw_timeout else DEFAULT_TIMEOUT_MS
        except ValueError:
            raise ConfigError(
                f"LLAMA_SERVER_TIMEOUT={raw_timeout!r} is not a whole number of milliseconds;"
                " set it to e.g. 30000"
            ) from None
        return cls(
            url=env.get("LLAMA_SERVER_URL", "").strip() or DEFAULT_URL,
            timeout_ms=timeout,
            api_key=env.get("LLAMA_API_KEY", "").strip() or None,
        )
