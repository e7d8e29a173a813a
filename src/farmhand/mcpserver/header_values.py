"""Header values of /mcp requests without the whitespace around them.

RFC 9110 §5.5: leading and trailing whitespace (OWS) is not part of a field value. h11
strips it, httptools (which uvicorn prefers when it is installed) does not, and the SDK
compares the 2026-07-28 routing headers (`Mcp-Name`, `Mcp-Method`, ...) with the body
verbatim, so `Mcp-Name:   search_tools  ` was refused with 400. SEP-2243 says accept it.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Receive, Scope, Send

OWS = b" \t"


class TrimmedHeaderValues:
    """An ASGI wrapper that strips OWS from every header value before the app sees it."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = [(name, value.strip(OWS)) for name, value in scope["headers"]]
            scope = {**scope, "headers": headers}
        await self.app(scope, receive, send)
