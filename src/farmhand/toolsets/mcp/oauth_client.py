"""OAuth 2.1 for an HTTP or SSE server with `auth: oauth`, on the SDK's own client.

The SDK's `OAuthClientProvider` does the protocol: protected-resource and authorization
server metadata discovery, `iss` checks, client ID metadata documents with dynamic
registration as the fallback, PKCE, refresh, and the scope step-up of a 403
`insufficient_scope`. farmhand adds what is its own: the tokens in a `TokenFile`, a refresh
a little before the token expires (also after a restart), the config's `client_id`,
`client_secret` and `scopes`, and who does the browser step: `farmhand mcp login` (a
`Browser`, oauth_login.py), or no one (`NoBrowser`): a server that needs a login then fails
with an error naming the command to run.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal
from urllib.parse import parse_qs, urlsplit

import httpx2
from mcp.client.auth import OAuthClientProvider
from mcp.client.auth.utils import union_scopes
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
)
from pydantic import AnyUrl

from farmhand.config.models import McpServerConfig
from farmhand.errors import ToolServerError
from farmhand.toolsets.mcp.oauth_store import TokenFile
from farmhand.version import farmhand_version

REFRESH_MARGIN = 60.0
"""Seconds before expiry that a token is refreshed (at most a tenth of its lifetime)."""
PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback"
"""The redirect URI of a client that cannot start a login (it never registers with it)."""


class LoginRequired(ToolServerError):
    """The server needs a (new) OAuth login, which only `farmhand mcp login` can run."""


def login_hint(server: str) -> str:
    return f"run `farmhand mcp login {server}` (on the machine farmhand runs on), then retry"


@dataclass
class Browser:
    """Who does the browser step of a login: `open` shows the authorization URL, `result`
    waits for the redirect back to `redirect_uri`."""

    redirect_uri: str
    open: Callable[[str], Awaitable[None]]
    result: Callable[[], Awaitable[AuthorizationCodeResult]]


@dataclass
class NoBrowser:
    """For `farmhand serve`, `chat` and `tools`: no login can run here. A login the server
    asks for becomes `LoginRequired`; the scope it would have asked for is remembered, so
    the next `farmhand mcp login` asks for it."""

    server: str
    store: TokenFile
    redirect_uri: str = field(default=PLACEHOLDER_REDIRECT)

    async def open(self, url: str) -> None:
        asked = (parse_qs(urlsplit(url).query).get("scope") or [""])[0]
        granted = set((self.store.state().scope or "").split())
        wider = [s for s in asked.split() if s not in granted]
        if self.store.has_tokens() and wider:
            self.store.want_scope(" ".join(wider))
            raise LoginRequired(
                f"MCP server {self.server!r} needs a wider OAuth grant for this call"
                f" (scopes {' '.join(wider)}): {login_hint(self.server)}"
            )
        self.store.forget_tokens()  # refused (revoked, or expired with no refresh): useless
        raise LoginRequired(
            f"MCP server {self.server!r} refused the stored OAuth token and needs a new"
            f" login: {login_hint(self.server)}"
        )

    async def result(self) -> AuthorizationCodeResult:
        raise LoginRequired(f"MCP server {self.server!r} needs a login: {login_hint(self.server)}")


class FarmhandOAuth(OAuthClientProvider):
    """The SDK's provider with farmhand's token file, scopes and early refresh."""

    def __init__(self, server: McpServerConfig, store: TokenFile, browser: Browser | NoBrowser):
        assert server.base_url is not None  # auth: oauth is validated for http and sse only
        self.server = server
        self.store = store
        self.browser_redirect = browser.redirect_uri
        self.refused: LoginRequired | None = None
        """Why the last request went out without a (new) login, for the caller's error."""
        self.loaded: tuple[int, int] | None = None
        """The version of the token file last read into the SDK's context."""
        metadata = OAuthClientMetadata(
            redirect_uris=[AnyUrl(browser.redirect_uri)],
            client_name="farmhand",
            software_id="farmhand",
            software_version=farmhand_version(),
            scope=" ".join(server.scopes) or None,
        )
        document = server.client_id if _is_metadata_document(server.client_id) else None
        super().__init__(
            server.base_url,
            metadata,
            store,
            redirect_handler=browser.open,
            callback_handler=browser.result,
            client_metadata_url=document,
        )

    async def async_auth_flow(
        self, request: httpx2.Request
    ) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        """The SDK's flow, except that a login no one can run ends it with the server's own
        refusal of the request (sent once more): the session lives on, and the caller's
        error says what to do (`refused`). Raised through httpx, it would end the session."""
        self.refused = None
        if self.loaded is not None and self.store.version() != self.loaded:
            # A login since (`farmhand mcp login` in another process): a long-lived session
            # takes its tokens on its next request, rather than the ones it started with.
            async with self.context.lock:
                await self._initialize()
        flow = super().async_auth_flow(request)
        try:
            outgoing = await flow.__anext__()
            while True:
                response = yield outgoing
                try:
                    outgoing = await flow.asend(response)
                except LoginRequired as refused:
                    self.refused = refused
                    yield request
                    return
        except StopAsyncIteration:
            return
        finally:
            await flow.aclose()

    def refusal(self) -> str | None:
        return str(self.refused) if self.refused is not None else None

    # The SDK's provider keeps its expiry and the discovered metadata in memory, and
    # refreshes only once the token has expired; these overrides give it what was stored
    # and a margin.

    async def _initialize(self) -> None:
        self.loaded = self.store.version()
        await super()._initialize()
        if self.context.client_info is None:
            self.context.client_info = self._configured_client()
        resource, server = self.store.discovered()
        if server is not None:
            self.context.protected_resource_metadata = resource
            self.context.oauth_metadata = server
            if resource is not None and resource.authorization_servers:
                self.context.auth_server_url = str(resource.authorization_servers[0])
        expires_at = self.store.expires_at()
        tokens = self.context.current_tokens
        lifetime = tokens.expires_in if tokens and tokens.expires_in else None
        self.context.token_expiry_time = (
            expires_at - _margin(lifetime) if expires_at is not None else None
        )

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        await super()._handle_token_response(response)
        self._refresh_early()
        self.store.set_discovered(
            self.context.protected_resource_metadata, self.context.oauth_metadata
        )

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        refreshed = await super()._handle_refresh_response(response)
        self._refresh_early()
        return refreshed

    async def _perform_authorization_code_grant(self) -> tuple[str, str]:
        # The SDK asks for the scopes the server names; add the config's and those a call
        # was refused for (step-up outside a login).
        wanted = union_scopes(" ".join(self.server.scopes) or None, self.store.wanted_scope())
        metadata = self.context.client_metadata
        metadata.scope = union_scopes(metadata.scope, wanted)
        self._secret_method()
        return await super()._perform_authorization_code_grant()

    def _secret_method(self) -> None:
        """The way a pre-registered client sends its secret, now that the server's metadata
        is known (`secret_method`)."""
        client = self.context.client_info
        if client is not None and client.client_secret and self.server.client_id is not None:
            client.token_endpoint_auth_method = secret_method(self.context.oauth_metadata)

    def _refresh_early(self) -> None:
        tokens = self.context.current_tokens
        if self.context.token_expiry_time is not None and tokens is not None:
            self.context.token_expiry_time -= _margin(tokens.expires_in)

    def _configured_client(self) -> OAuthClientInformationFull | None:
        return configured_client(self.server, self.browser_redirect, self.store.discovered()[1])


def configured_client(
    server: McpServerConfig, redirect_uri: str, metadata: OAuthMetadata | None
) -> OAuthClientInformationFull | None:
    """The pre-registered client of the config (`client_id`), if it names one."""
    client_id = server.client_id
    if not client_id or _is_metadata_document(client_id):
        return None
    secret = server.client_secret
    return OAuthClientInformationFull(
        client_id=client_id,
        client_secret=secret,
        redirect_uris=[AnyUrl(redirect_uri)],
        token_endpoint_auth_method=secret_method(metadata) if secret else "none",
    )


def secret_method(
    metadata: OAuthMetadata | None,
) -> Literal["client_secret_basic", "client_secret_post"]:
    """How a pre-registered client sends its secret: HTTP Basic (RFC 6749 §2.3.1: every
    server takes it), unless the server's metadata lists only the form field."""
    offered = (metadata.token_endpoint_auth_methods_supported if metadata else None) or []
    only_post = "client_secret_post" in offered and "client_secret_basic" not in offered
    return "client_secret_post" if only_post else "client_secret_basic"


def _margin(lifetime: int | None) -> float:
    return min(REFRESH_MARGIN, lifetime / 10) if lifetime else 0.0


def _is_metadata_document(client_id: str | None) -> bool:
    return bool(client_id and client_id.startswith("https://"))


def oauth_for(
    server: McpServerConfig, browser: Browser | None = None, store: TokenFile | None = None
) -> FarmhandOAuth:
    """The httpx auth of one server. Without a browser, a server with no stored tokens
    fails at once (LoginRequired), before anything is sent or registered."""
    assert server.base_url is not None
    store = store or TokenFile(server.name, server.base_url)
    if browser is None:
        if not store.has_tokens():
            raise LoginRequired(
                f"MCP server {server.name!r} uses OAuth and has no login yet:"
                f" {login_hint(server.name)}"
            )
        return FarmhandOAuth(server, store, NoBrowser(server.name, store))
    return FarmhandOAuth(server, store, browser)
