"""An OAuth-protected MCP server on loopback, built with the SDK's server-side auth: an
authorization server (metadata, dynamic registration, /authorize, /token, /revoke) on one
port and a resource server (protected-resource metadata, bearer tokens, /mcp) on another.

    python oauth_server.py AS_PORT RS_PORT [SSE_PORT]

(SSE_PORT: the same tools over the SSE transport, a resource server of its own at /sse.)

The user at /authorize always clicks "Allow": it redirects straight back with a code (and
`iss`, RFC 9207). Tokens live in memory. The tool `audit_log` needs the scope `admin`
beyond the `tools` every call needs: the resource server answers a call to it without
that scope with 403 `insufficient_scope` (the step-up challenge). Test-only routes on the
authorization server: POST /test/expire (every access token expires now), GET /test/counts,
POST /test/preregister (a client registered ahead, as on a provider's console).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import time
from collections import Counter
from typing import Any

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    TokenError,
    construct_redirect_uri,
)
from mcp.server.auth.routes import create_auth_routes
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions, RevocationOptions
from mcp.server.mcpserver import MCPServer
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from pydantic import AnyHttpUrl
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SCOPES = ["tools", "admin"]
LIFETIME = 3600


class MemoryAuthServer:
    """The authorization server's records, in memory."""

    def __init__(self, issuer: str) -> None:
        self.issuer = issuer
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}
        self.pairs: dict[str, str] = {}  # refresh token -> its access token
        self.counts: Counter[str] = Counter()

    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        return self.clients.get(client_id)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        # This server's policy: a registered client may ask for every scope it has.
        client_info.scope = " ".join(SCOPES)
        self.clients[client_info.client_id or ""] = client_info
        self.counts["registrations"] += 1

    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        code = secrets.token_urlsafe(32)
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or ["tools"],
            expires_at=time.time() + 300,
            client_id=client.client_id or "",
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
            subject="farmer",
        )
        self.counts["authorizations"] += 1
        return construct_redirect_uri(
            str(params.redirect_uri), code=code, state=params.state, iss=self.issuer
        )

    async def load_authorization_code(
        self, client: OAuthClientInformationFull, code: str
    ) -> AuthorizationCode | None:
        return self.codes.get(code)

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, code: AuthorizationCode
    ) -> OAuthToken:
        self.codes.pop(code.code, None)
        return self._issue(client.client_id or "", code.scopes, code.resource)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, token: str
    ) -> RefreshToken | None:
        found = self.refresh.get(token)
        return found if found and found.client_id == client.client_id else None

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        if refresh_token.token not in self.refresh:
            raise TokenError("invalid_grant", "refresh token revoked")
        self._drop(refresh_token.token)
        self.counts["refreshes"] += 1
        return self._issue(
            refresh_token.client_id, scopes or refresh_token.scopes, refresh_token.resource
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        if isinstance(token, RefreshToken):
            self._drop(token.token)
        else:
            self.access.pop(token.token, None)
            for refresh, access in list(self.pairs.items()):
                if access == token.token:
                    self._drop(refresh)
        self.counts["revocations"] += 1

    def _issue(self, client_id: str, scopes: list[str], resource: str | None) -> OAuthToken:
        access, refresh = f"at-{secrets.token_hex(16)}", f"rt-{secrets.token_hex(16)}"
        expires = int(time.time()) + LIFETIME
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=expires,
            resource=resource,
            subject="farmer",
            claims={"iss": self.issuer},
        )
        self.refresh[refresh] = RefreshToken(
            token=refresh, client_id=client_id, scopes=scopes, resource=resource
        )
        self.pairs[refresh] = access
        self.counts["tokens"] += 1
        return OAuthToken(
            access_token=access, expires_in=LIFETIME, scope=" ".join(scopes), refresh_token=refresh
        )

    def _drop(self, refresh: str) -> None:
        self.refresh.pop(refresh, None)
        self.access.pop(self.pairs.pop(refresh, ""), None)


class Verifier:
    """The resource server's token check (in-process; a real one would introspect)."""

    def __init__(self, records: MemoryAuthServer) -> None:
        self.records = records

    async def verify_token(self, token: str) -> AccessToken | None:
        return await self.records.load_access_token(token)


class StepUp:
    """403 insufficient_scope for a call to `audit_log` whose token lacks `admin`."""

    def __init__(self, app: ASGIApp, records: MemoryAuthServer, metadata_url: str) -> None:
        self.app, self.records, self.metadata_url = app, records, metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if self._needs_admin(scope, body):
            challenge = (
                f'Bearer error="insufficient_scope", scope="tools admin",'
                f' resource_metadata="{self.metadata_url}"'
            )
            response = JSONResponse(
                {"error": "insufficient_scope"}, 403, headers={"WWW-Authenticate": challenge}
            )
            await response(scope, receive, send)
            return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    def _needs_admin(self, scope: Scope, body: bytes) -> bool:
        try:
            message: Any = json.loads(body)
        except ValueError:
            return False
        if not (isinstance(message, dict) and message.get("method") == "tools/call"):
            return False
        if (message.get("params") or {}).get("name") != "audit_log":
            return False
        headers = dict(scope["headers"])
        token = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        found = self.records.access.get(token)
        return found is None or "admin" not in found.scopes


def vault(records: MemoryAuthServer, issuer: str, resource: str) -> MCPServer:
    """The protected MCP server: its tools need the `tools` scope."""
    mcp = MCPServer(
        "vault",
        token_verifier=Verifier(records),
        auth=AuthSettings(
            issuer_url=AnyHttpUrl(issuer),
            resource_server_url=AnyHttpUrl(resource),
            required_scopes=["tools"],
            validate_token_resource=True,
        ),
    )

    @mcp.tool()
    def whoami() -> str:
        """Who the token belongs to, and its scopes."""
        token = get_access_token()
        assert token is not None
        return f"{token.subject} ({' '.join(token.scopes)})"

    @mcp.tool()
    def audit_log() -> str:
        """The audit log (needs the admin scope)."""
        return "audit: 3 entries"

    return mcp


def build(as_port: int, rs_port: int) -> tuple[Starlette, ASGIApp, MemoryAuthServer]:
    issuer = f"http://127.0.0.1:{as_port}"
    records = MemoryAuthServer(str(AnyHttpUrl(issuer)))  # as its metadata writes it
    routes = create_auth_routes(
        records,  # type: ignore[arg-type]
        AnyHttpUrl(issuer),
        client_registration_options=ClientRegistrationOptions(
            enabled=True, valid_scopes=SCOPES, default_scopes=["tools"]
        ),
        revocation_options=RevocationOptions(enabled=True),
    )

    async def expire(request: Request) -> JSONResponse:
        for token in records.access.values():
            token.expires_at = int(time.time()) - 1
        return JSONResponse({"expired": len(records.access)})

    async def counts(request: Request) -> JSONResponse:
        return JSONResponse(dict(records.counts))

    async def preregister(request: Request) -> JSONResponse:
        client = OAuthClientInformationFull.model_validate(
            {**await request.json(), "token_endpoint_auth_method": "client_secret_basic"}
        )
        await records.register_client(client)
        return JSONResponse({"client_id": client.client_id})

    routes += [
        Route("/test/expire", expire, methods=["POST"]),
        Route("/test/counts", counts),
        Route("/test/preregister", preregister, methods=["POST"]),
    ]
    authorization_server = Starlette(routes=routes)

    mcp = vault(records, issuer, f"http://127.0.0.1:{rs_port}/mcp")
    metadata_url = f"http://127.0.0.1:{rs_port}/.well-known/oauth-protected-resource/mcp"
    resource_server = StepUp(mcp.streamable_http_app(), records, metadata_url)
    return authorization_server, resource_server, records


async def main(as_port: int, rs_port: int, sse_port: int | None) -> None:
    authorization_server, resource_server, records = build(as_port, rs_port)
    apps: list[tuple[ASGIApp, int]] = [(authorization_server, as_port), (resource_server, rs_port)]
    if sse_port is not None:
        issuer = f"http://127.0.0.1:{as_port}"
        apps.append(
            (vault(records, issuer, f"http://127.0.0.1:{sse_port}/sse").sse_app(), sse_port)
        )
    servers = [
        uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        for app, port in apps
    ]
    await asyncio.gather(*(s.serve() for s in servers))


if __name__ == "__main__":
    ports = [int(a) for a in sys.argv[1:4]]
    asyncio.run(main(ports[0], ports[1], ports[2] if len(ports) > 2 else None))
