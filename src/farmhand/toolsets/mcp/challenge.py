"""What an HTTP server's refusal said: a 401 with `WWW-Authenticate` (RFC 9728) means the
server wants an OAuth login, which farmhand offers when the config has not asked for it.

The SDK turns such an answer into a generic JSON-RPC error; an httpx response hook sees the
status and header first, and the connection's failure message adds the advice.
"""

from __future__ import annotations

import httpx2


class Challenge:
    """The last 401 with a Bearer challenge seen on one server's connection."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.header: str | None = None

    async def seen(self, response: httpx2.Response) -> None:
        header = response.headers.get("www-authenticate")
        if response.status_code == 401 and header and "bearer" in header.lower():
            self.header = header

    def advice(self) -> str | None:
        """What to do about it, or None when no server asked for a login."""
        if self.header is None:
            return None
        return (
            f"the server answered 401 and asks for an OAuth login (WWW-Authenticate: Bearer):"
            f" add `auth: oauth` to server {self.server!r} in mcp.servers, then run"
            f" `farmhand mcp login {self.server}`"
        )
