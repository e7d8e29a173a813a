"""The API dialects farmhand serves, one descriptor each, in the one list the app, the error
answers and the OpenAPI document read. A dialect's wire shapes live in its sub-package of
`farmhand.dialects` (no Starlette there), its routes in `server/<name>_api.py`; adding a
dialect is those two and one line in `DIALECTS`.

Routes that are not a dialect's are mounted beside them by `app.py`: projects (/v1/projects),
the playground (/, /playground/, /api/mcp/, /api/conversations), eval reports, /health,
/openapi.json, and farmhand's MCP server (/mcp) and A2A agent (/a2a and its card).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from starlette.routing import BaseRoute

from farmhand.dialects.anthropic import openapi as anthropic_openapi
from farmhand.dialects.anthropic.errors import anthropic_body
from farmhand.dialects.api_error import ErrorBody
from farmhand.dialects.ollama import openapi as ollama_openapi
from farmhand.dialects.ollama.errors import ollama_body
from farmhand.dialects.openai import openapi as openai_openapi
from farmhand.dialects.openai.errors import openai_body
from farmhand.dialects.openapi_parts import OpenApiPaths
from farmhand.dialects.responses import openapi as responses_openapi
from farmhand.server import anthropic_api, ollama_api, openai_api, responses_api
from farmhand.server.errors import mcp_body


@dataclass(frozen=True)
class DialectSpec:
    """One API dialect: where its paths are, how it is served and described."""

    name: str
    prefixes: tuple[str, ...]
    """The paths it owns, each with everything under it: a refusal there (no key, a body too
    large, no such route) answers in its error shape."""
    routes: Callable[[], list[BaseRoute]]
    error_body: ErrorBody
    openapi: Callable[[], OpenApiPaths]
    """Its part of the OpenAPI document's `paths`."""

    def owns(self, path: str) -> bool:
        return any(path == p or path.startswith(p + "/") for p in self.prefixes)


# The order is the order Starlette tries the routes in, a regex each: each dialect lists its
# chat route first and the dialects come before the rest (/v1/messages was the 29th route
# tried, about a twentieth of what farmhand spent on a whole answer).
DIALECTS: tuple[DialectSpec, ...] = (
    DialectSpec(
        "openai",
        ("/v1/chat/completions", "/v1/models"),
        openai_api.routes,
        openai_body,
        openai_openapi.openapi_paths,
    ),
    DialectSpec(
        "anthropic",
        ("/v1/messages",),
        anthropic_api.routes,
        anthropic_body,
        anthropic_openapi.openapi_paths,
    ),
    DialectSpec(
        "responses",
        ("/v1/responses",),
        responses_api.routes,
        openai_body,
        responses_openapi.openapi_paths,
    ),
    DialectSpec("ollama", ("/api",), ollama_api.routes, ollama_body, ollama_openapi.openapi_paths),
)


def dialect_routes() -> list[BaseRoute]:
    return [route for dialect in DIALECTS for route in dialect.routes()]


def dialect_for_path(path: str) -> DialectSpec | None:
    """The dialect whose prefix `path` is under, if any."""
    return next((d for d in DIALECTS if d.owns(path)), None)


def error_body_for_path(path: str) -> ErrorBody:
    """The error shape a refusal of `path` answers in: JSON-RPC's for /mcp and /a2a (refused
    before the MCP or A2A SDK sees the request; /a2a is one path), the owning dialect's, else
    OpenAI's (projects, /health, the playground's page, ...)."""
    if path == "/a2a" or path == "/mcp" or path.startswith("/mcp/"):
        return mcp_body
    dialect = dialect_for_path(path)
    return openai_body if dialect is None else dialect.error_body
