"""`farmhand mcp login`: the browser step of OAuth, with a loopback redirect (RFC 8252).

A one-route web server on 127.0.0.1 (a free port, or the config's `callback_port`) waits
for the authorization server to send the browser back with a code; the SDK's provider
checks its `state` and `iss` and exchanges it for tokens. The login is a real connection
to the server: it lists the tools, which is what makes the server ask for the login, and
shows that the new token works.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import uvicorn
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.client.auth.oauth2 import OAuthContext
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata
from pydantic import AnyUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from farmhand.config.models import McpServerConfig
from farmhand.errors import ConfigError, ToolServerError
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.connection import reason
from farmhand.toolsets.mcp.oauth_client import (
    PLACEHOLDER_REDIRECT,
    Browser,
    configured_client,
    oauth_for,
)
from farmhand.toolsets.mcp.oauth_store import AuthState, TokenFile
from farmhand.toolsets.mcp.transports import server_target

CALLBACK_PATH = "/callback"
LOGIN_TIMEOUT = 600.0
"""Seconds the loopback waits for the browser to come back."""


class LoginFailed(ToolServerError):
    """The authorization server refused, or the browser never came back."""


@dataclass(frozen=True)
class LoginResult:
    tools: int
    state: AuthState
    asked: bool
    """Whether the server asked for a login at all (a server that did not stores nothing)."""


class Loopback:
    """The redirect target of one login; `result()` waits for the browser's return.

    Only a redirect carrying the `state` of the authorization URL shown (`expect`) counts:
    another page on this machine cannot end the login, with a code or with an error."""

    def __init__(self, port: int, server: str) -> None:
        self.redirect_uri = f"http://127.0.0.1:{port}{CALLBACK_PATH}"
        self.server = server
        self.asked = False
        self.state: str | None = None
        self.refusal: str | None = None
        self._send, self._receive = anyio.create_memory_object_stream[AuthorizationCodeResult](1)

    def expect(self, url: str) -> None:
        """The authorization URL about to be opened: its `state` is the one to come back."""
        self.asked = True
        states = parse_qs(urlsplit(url).query).get("state")
        self.state = states[0] if states else None

    async def result(self) -> AuthorizationCodeResult:
        try:
            with anyio.fail_after(LOGIN_TIMEOUT):
                return await self._receive.receive()
        except TimeoutError:
            raise LoginFailed(
                f"the browser did not come back to {self.redirect_uri} within"
                f" {LOGIN_TIMEOUT:g} s; run `farmhand mcp login {self.server}` again"
            ) from None
        except anyio.EndOfStream:
            raise LoginFailed(
                f"the authorization server refused the login to {self.server}: {self.refusal}"
            ) from None

    def app(self) -> Starlette:
        return Starlette(routes=[Route(CALLBACK_PATH, self.callback)])

    async def callback(self, request: Request) -> PlainTextResponse:
        query = request.query_params
        if self.state is None or query.get("state") != self.state:
            return PlainTextResponse("farmhand: this address takes its login's redirect only", 400)
        if "error" in query:
            # The SDK's flow waits for a code: a refusal ends it, with the server's words.
            self.refusal = _printable(query.get("error_description") or query["error"])
            self._send.close()
            return PlainTextResponse(f"farmhand: the login was refused: {self.refusal}", 400)
        if not query.get("code"):
            return PlainTextResponse("farmhand: the redirect carries no code", 400)
        try:
            self._send.send_nowait(
                AuthorizationCodeResult(code=query["code"], state=self.state, iss=query.get("iss"))
            )
        except (anyio.WouldBlock, anyio.ClosedResourceError):
            return PlainTextResponse("farmhand: this login has already finished", 409)
        return PlainTextResponse(f"farmhand: signed in to {self.server}. You can close this tab.")


def _printable(text: str, limit: int = 200) -> str:
    """A remote server's words, safe for a terminal: printable characters, cut short."""
    clean = "".join(c if c.isprintable() else " " for c in text)
    return clean if len(clean) <= limit else clean[: limit - 1] + "…"


@asynccontextmanager
async def loopback(server: McpServerConfig) -> AsyncIterator[Loopback]:
    """The loopback redirect target, listening on 127.0.0.1 only, for one login."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.bind(("127.0.0.1", server.callback_port or 0))
    except OSError as exc:
        sock.close()
        raise ConfigError(
            f"cannot listen on 127.0.0.1:{server.callback_port} for the login's redirect"
            f" ({exc}); free the port or change callback_port of server {server.name!r}"
        ) from exc
    sock.listen()
    target = Loopback(sock.getsockname()[1], server.name)
    config = uvicorn.Config(target.app(), log_level="warning", lifespan="off")
    web = uvicorn.Server(config)
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(web.serve, [sock])
            try:
                yield target
            finally:
                web.should_exit = True  # also on a failure: else the group waits for ever
    finally:
        sock.close()


async def login(
    server: McpServerConfig, show: Callable[[str], Awaitable[None]], *, connect_timeout: float
) -> LoginResult:
    """Sign in to `server` (it must have `auth: oauth`); `show` presents the authorization
    URL (a browser, or a line to copy). The tokens land in the server's `TokenFile`."""
    if server.auth != "oauth" or server.base_url is None:
        raise ConfigError(
            f"MCP server {server.name!r} does not use OAuth; add `auth: oauth` to it in"
            " mcp.servers (http and sse servers only)"
        )
    store = TokenFile(server.name, server.base_url)
    failure: LoginFailed | None = None
    tools = 0
    async with loopback(server) as callback:
        try:
            tools = await _sign_in(server, store, callback, show, connect_timeout)
        except LoginFailed as exc:
            failure = exc  # raised outside the listener's task group, not wrapped in a group
    if failure is not None:
        raise failure
    return LoginResult(tools, store.state(), callback.asked)


async def _sign_in(
    server: McpServerConfig,
    store: TokenFile,
    callback: Loopback,
    show: Callable[[str], Awaitable[None]],
    connect_timeout: float,
) -> int:
    async def opened(url: str) -> None:
        callback.expect(url)
        await show(url)

    registered = await store.get_client_info()
    ours = {str(u) for u in registered.redirect_uris or ()} if registered else set()
    if not server.client_id and registered is not None and callback.redirect_uri not in ours:
        store.forget_client()  # registered with another port's redirect: register anew
    store.forget_tokens()
    auth = oauth_for(server, Browser(callback.redirect_uri, opened, callback.result), store)
    toolset = MCPToolset(
        server.name, server_target(server, auth=auth), connect_timeout=connect_timeout
    )
    try:
        async with toolset:
            return len(await toolset.list_tools())
    except (OAuthFlowError, OAuthTokenError, OAuthRegistrationError, ToolServerError) as exc:
        raise LoginFailed(f"the login to MCP server {server.name!r} failed: {exc}") from exc
    except Exception as exc:
        why = f"the login to MCP server {server.name!r} failed ({reason(exc)})"
        raise LoginFailed(why) from exc


@dataclass(frozen=True)
class LogoutResult:
    removed: bool
    """Whether there were stored tokens to drop."""
    revoked: str | None
    """What the authorization server said to the revocation (RFC 7009), if it offers one."""


async def logout(server: McpServerConfig) -> LogoutResult:
    """Drop the server's stored login; first ask its authorization server to revoke the
    refresh token (which ends its access tokens too), where it offers revocation."""
    if server.base_url is None:
        raise ConfigError(f"MCP server {server.name!r} has no URL; OAuth is for http and sse")
    store = TokenFile(server.name, server.base_url)
    tokens, registered = await store.get_tokens(), await store.get_client_info()
    found = store.discovered()[1]
    client = registered or configured_client(server, PLACEHOLDER_REDIRECT, found)
    revocation = found.revocation_endpoint if found else None
    revoked: str | None = None
    if tokens is not None and client is not None and revocation is not None:
        # The client authenticates as at the token endpoint: the SDK's own way of doing it.
        context = OAuthContext(
            server.base_url,
            OAuthClientMetadata(redirect_uris=[AnyUrl(PLACEHOLDER_REDIRECT)]),
            store,
            None,
            None,
            client_info=client,
        )
        token = tokens.refresh_token or tokens.access_token
        form, headers = context.prepare_token_auth(
            {"token": token, "client_id": client.client_id or ""},
            {"Content-Type": "application/x-www-form-urlencoded"},
        )
        tries = [form]
        if client.client_secret and "client_secret" not in form:
            # Some servers (the MCP SDK's among them) read a revocation's secret from the
            # form even from a client that authenticates with HTTP Basic.
            tries.append({**form, "client_secret": client.client_secret})
        try:
            async with httpx2.AsyncClient(timeout=30.0) as http:
                for attempt in tries:
                    answer = await http.post(str(revocation), data=attempt, headers=headers)
                    if answer.status_code == 200:
                        break
            revoked = "revoked" if answer.status_code == 200 else f"HTTP {answer.status_code}"
        except httpx2.HTTPError as exc:
            revoked = f"not reached ({reason(exc)})"
    return LogoutResult(store.remove(), revoked)
