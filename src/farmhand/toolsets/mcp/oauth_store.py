"""Where the OAuth tokens of one MCP server are kept: one JSON file per server under
`FARMHAND_HOME/mcp-oauth/`, readable by its owner only (0600, in a 0700 folder).

A file belongs to the server's URL as well as its name: when the config points the name
at another URL, what the file holds is never sent there (it reads as empty). It holds the
tokens, when the access token expires (as a time, not the `expires_in` of the answer, so
a restart still knows), the client's registration, and the scope a refused call asked for
(so the next `farmhand mcp login` asks for it too).
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp.shared.auth import (
    OAuthClientInformationFull,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)

from farmhand.config.models import McpServerConfig
from farmhand.paths import farmhand_home

FOLDER = "mcp-oauth"


def token_path(server: str, home: Path | None = None) -> Path:
    """The file of one server: its name made safe for a file name (with the name in hex
    after it when it had to be changed, so two names never share a file)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", server).strip(".") or "_"
    if safe != server:
        safe += "-" + server.encode().hex()[:16]
    return (home or farmhand_home()) / FOLDER / f"{safe}.json"


@dataclass(frozen=True)
class AuthState:
    """What `farmhand tools servers` shows for a server with `auth: oauth`."""

    logged_in: bool
    expires_at: float | None = None
    scope: str | None = None
    refreshable: bool = False
    wanted_scope: str | None = None

    def describe(self, server: str, now: float | None = None) -> str:
        if not self.logged_in:
            return f"oauth: login needed (farmhand mcp login {server})"
        parts = ["oauth: logged in"]
        if self.scope:
            parts.append(f"scopes {self.scope}")
        if self.expires_at is not None:
            left = self.expires_at - (now if now is not None else time.time())
            if left > 0:
                parts.append(f"token valid {_duration(left)} more")
            else:
                then = "refreshed on use" if self.refreshable else "no refresh token"
                parts.append(f"token expired, {then}")
        text = ", ".join(parts)
        if self.wanted_scope:
            text += f"; a call needs {self.wanted_scope}: farmhand mcp login {server}"
        return text


def _duration(seconds: float) -> str:
    if seconds >= 3600:
        return f"{seconds / 3600:.0f} h"
    if seconds >= 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


class TokenFile:
    """The SDK's `TokenStorage` over one server's file."""

    def __init__(self, server: str, url: str, home: Path | None = None) -> None:
        self.server = server
        self.url = url
        self.path = token_path(server, home)

    # --- what the SDK calls ----------------------------------------------------------

    async def get_tokens(self) -> OAuthToken | None:
        raw = self._read().get("tokens")
        return OAuthToken.model_validate(raw) if raw else None

    async def set_tokens(self, tokens: OAuthToken) -> None:
        expires_at = time.time() + int(tokens.expires_in) if tokens.expires_in else None
        granted = set((tokens.scope or "").split())
        wanted = self._read().get("wanted_scope") or ""
        left = " ".join(s for s in wanted.split() if s not in granted) or None
        self._update(
            tokens=tokens.model_dump(mode="json", exclude_none=True),
            expires_at=expires_at,
            wanted_scope=left,
        )

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        raw = self._read().get("client_info")
        return OAuthClientInformationFull.model_validate(raw) if raw else None

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._update(client_info=client_info.model_dump(mode="json", exclude_none=True))

    # --- farmhand's own ---------------------------------------------------------------

    def discovered(self) -> tuple[ProtectedResourceMetadata | None, OAuthMetadata | None]:
        """The metadata the last login found: the SDK keeps it in memory only, and a refresh
        after a restart needs the authorization server's token endpoint."""
        data = self._read()
        resource, server = data.get("resource_metadata"), data.get("server_metadata")
        return (
            ProtectedResourceMetadata.model_validate(resource) if resource else None,
            OAuthMetadata.model_validate(server) if server else None,
        )

    def set_discovered(
        self, resource: ProtectedResourceMetadata | None, server: OAuthMetadata | None
    ) -> None:
        self._update(
            resource_metadata=resource.model_dump(mode="json", exclude_none=True)
            if resource
            else None,
            server_metadata=server.model_dump(mode="json", exclude_none=True) if server else None,
        )

    def expires_at(self) -> float | None:
        value = self._read().get("expires_at")
        return float(value) if isinstance(value, int | float) else None

    def wanted_scope(self) -> str | None:
        value = self._read().get("wanted_scope")
        return value if isinstance(value, str) and value else None

    def want_scope(self, scope: str) -> None:
        """Remember the scope a call was refused for, for the next login."""
        self._update(wanted_scope=scope)

    def version(self) -> tuple[int, int] | None:
        """Changes whenever the file is written (by this process or a login elsewhere):
        every write replaces the file, so its inode changes even within one clock tick."""
        try:
            found = self.path.stat()
        except FileNotFoundError:
            return None
        return found.st_ino, found.st_mtime_ns

    def has_tokens(self) -> bool:
        return bool(self._read().get("tokens"))

    def forget_tokens(self) -> None:
        """Drop the tokens, keep the client's registration (a login starts from here)."""
        data = self._read()
        for key in ("tokens", "expires_at"):
            data.pop(key, None)
        self._write(data)

    def forget_client(self) -> None:
        data = self._read()
        data.pop("client_info", None)
        self._write(data)

    def remove(self) -> bool:
        """Delete the file; whether there was one."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def state(self) -> AuthState:
        data = self._read()
        tokens = data.get("tokens") or {}
        return AuthState(
            logged_in=bool(tokens.get("access_token")),
            expires_at=self.expires_at(),
            scope=tokens.get("scope"),
            refreshable=bool(tokens.get("refresh_token")),
            wanted_scope=self.wanted_scope(),
        )

    # --- the file ---------------------------------------------------------------------

    def _read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):
            return {}  # unreadable or damaged: as if never logged in (login writes it anew)
        if not isinstance(data, dict) or data.get("server_url") != self.url:
            return {}  # another URL's tokens (the config changed): never sent here
        return data

    def _update(self, **values: Any) -> None:
        data = self._read()
        data.update(values)
        self._write(data)

    def _write(self, data: dict[str, Any]) -> None:
        data["server_url"] = self.url
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(self.path.parent, 0o700)
        temporary = self.path.with_suffix(".tmp")
        # Created 0600 from the start: the tokens are never readable by others, not even
        # between creating the file and a chmod.
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump({k: v for k, v in data.items() if v is not None}, file, indent=2)
        os.chmod(temporary, 0o600)  # an older file of that name may have had other bits
        os.replace(temporary, self.path)


def auth_description(server: McpServerConfig) -> str:
    """How a server signs in, for `farmhand tools servers` (never a token)."""
    if server.auth == "oauth" and server.base_url is not None:
        return TokenFile(server.name, server.base_url).state().describe(server.name)
    if any(name.lower() == "authorization" for name in server.headers):
        return "auth: Authorization header"
    return "auth: none"
