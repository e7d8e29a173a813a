"""A stdio MCP server that asks its user things mid-call (elicitation), with tools of every
destructiveness, for the elicitation and approval tests.

On the stateless revision (2026-07-28) a server cannot send the client a request: a tool
answers "input required" with its questions, and the client calls again with the answers.
On older revisions it sends `elicitation/create` mid-call. The tools here do whichever the
session speaks, so both of the client's paths are exercised.
"""

import json
from typing import Any, Literal

import anyio
from mcp import types
from mcp.server.mcpserver import Context, MCPServer
from mcp.types import ToolAnnotations
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

server = MCPServer("asking")
SAFE = ToolAnnotations(read_only_hint=False, destructive_hint=False)


class Pizza(BaseModel):
    name: str = Field(description="Who the pizza is for")
    size: Literal["small", "large"] = "large"
    toppings: int = Field(default=2, ge=0, le=5, description="How many toppings")


def modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def input_required(params: types.ElicitRequestParams) -> types.InputRequiredResult:
    return types.InputRequiredResult(
        input_requests={"q": types.ElicitRequest(params=params)}, request_state="asked"
    )


def given(ctx: Context) -> types.ElicitResult | None:
    answer = (ctx.input_responses or {}).get("q")
    return answer if isinstance(answer, types.ElicitResult) else None


def pizza_text(action: str, content: dict[str, Any] | None) -> str:
    if action != "accept" or content is None:
        return f"no pizza ordered: the user chose {action}"
    pizza = Pizza.model_validate(content)
    return f"ordered a {pizza.size} pizza with {pizza.toppings} toppings for {pizza.name}"


@server.tool(annotations=SAFE)
async def order_pizza(ctx: Context) -> Any:
    """Order a pizza; asks who it is for and how big."""
    message = "Which pizza shall I order?"
    if not modern(ctx):
        answer = await ctx.elicit(message, Pizza)
        content = answer.data.model_dump() if answer.action == "accept" else None
        return pizza_text(answer.action, content)
    reply = given(ctx)
    if reply is None:
        form = types.ElicitRequestFormParams(
            message=message, requested_schema=Pizza.model_json_schema()
        )
        return input_required(form)
    return pizza_text(reply.action, reply.content)


@server.tool(annotations=SAFE)
async def sign_in(ctx: Context) -> Any:
    """Sign in on the provider's page (asks the user to open a URL)."""
    message, url = "Sign in to the pantry", "https://pantry.test/login"
    if not modern(ctx):
        answer = await ctx.elicit_url(message, url, "e-1")
        return f"sign-in: {answer.action}"
    reply = given(ctx)
    if reply is None:
        return input_required(types.ElicitRequestURLParams(message=message, url=url))
    return f"sign-in: {reply.action}"


@server.tool(annotations=SAFE)
async def slow(seconds: float) -> str:
    """Take `seconds` to answer (other calls go on meanwhile)."""
    await anyio.sleep(seconds)
    return "slept"


@server.tool()
def wipe(target: str) -> str:
    """Delete everything in `target` (no annotations: destructive by the spec's defaults)."""
    return f"wiped {target}"


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def client(ctx: Context) -> str:
    """How the client introduced itself: its info and capabilities, as JSON."""
    params = ctx.session.client_params
    info = params.client_info.model_dump(exclude_none=True) if params else None
    capabilities = ctx.client_capabilities
    declared = capabilities.model_dump(exclude_none=True) if capabilities else None
    return json.dumps({"info": info, "capabilities": declared})


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def peek() -> str:
    """Look without touching."""
    return "all there"


if __name__ == "__main__":
    server.run("stdio")
