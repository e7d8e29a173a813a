"""farmhand's own API as MCP tools: what LlamaFarm exposes when it is an MCP server.

    list_projects    create_project    get_project    update_project    delete_project
    chat_completions (runs the whole tool loop)    list_models    search_tools    rag_query

Names follow LlamaFarm's API operations (its project routes are `list_projects`,
`create_project`, `get_project`, `update_project`, `delete_project`; its table calls the
chat tool "Chat completions" and the models one "List models"); results are the same JSON
as the HTTP API (`{"total", "projects"}`, `{"project"}`, an OpenAI `chat.completion`,
OpenAI's model list, Ollama's tool search). `rag_query` is LlamaFarm's "RAG query": it
searches a collection built with `farmhand rag add`. `search_tools` is farmhand's own (the
Ollama MCP API's `/api/tools/search`).

The tools read the ServiceState through a getter, so the same server runs inside
`farmhand serve` (streamable HTTP at /mcp, see `mcpserver.http`) and on its own over stdio
(`farmhand mcp serve`). A failure a caller can fix comes back as a tool error whose text
says what to fix, never as a protocol error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from mcp.types import ToolAnnotations
from pydantic import Field

from farmhand.dialects.openai.chat import parse_chat
from farmhand.dialects.openai.completion import completion_body
from farmhand.mcpserver.llama_tools import LlamaTools, register_llama_tools
from farmhand.mcpserver.results import ToolServer
from farmhand.rag.library import MAX_TOP_K, Mode
from farmhand.service.chat import complete_chat
from farmhand.service.projects import ProjectStore, state_for, store_for
from farmhand.service.rag import collection_names, query_collection
from farmhand.service.state import ServiceState
from farmhand.service.tool_search import search_tools as search_tools_of

StateGetter = Callable[[], ServiceState]
READ_ONLY = ToolAnnotations(read_only_hint=True)
"""Tools that only read: a client may offer them where writing is not allowed."""

Namespace = Annotated[str, Field(description="Project namespace, e.g. 'default'.")]
ProjectName = Annotated[str, Field(description="Project name (letters, digits, _ . -).")]
Config = Annotated[
    dict[str, Any] | str | None,
    Field(
        description="The project's farmhand.yaml (llamafarm.yaml layout): a mapping of its"
        " keys (version, mcp, runtime, prompts) or the YAML text."
    ),
]
OptionalProject = Annotated[
    str | None,
    Field(description="Use this project's models and MCP servers (needs `namespace` too)."),
]


def build_server(get_state: StateGetter, llama: LlamaTools | None = None) -> MCPServer:
    """An MCPServer with farmhand's tools, over whatever ServiceState `get_state` returns,
    and the llama_* tools when `llama` is given (the config has a `llama_server:` section)."""
    server: MCPServer = ToolServer(
        "farmhand",
        instructions=(
            "farmhand runs language models with tools. Projects are named configs"
            " (models + MCP servers) in namespaces; chat_completions runs a model with its"
            " tools until it answers."
        ),
        # No subscriptions/listen: the tool list never changes, and a listen request is a
        # response that stays open until the server stops, which would keep uvicorn from
        # draining (the pool's connection to our own /mcp, with self-reference, holds one).
        subscriptions=False,
    )

    def store() -> ProjectStore:
        return store_for(get_state())

    def state_of(namespace: str | None, project: str | None) -> ServiceState:
        state = get_state()
        if project is None:
            return state
        return state_for(state, store().get(namespace or "default", project))

    @server.tool(annotations=READ_ONLY)
    def list_projects(namespace: Namespace = "default") -> dict[str, Any]:
        """Get all projects in a namespace: {total, projects: [{namespace, name, config}]}."""
        projects = store().list(namespace)
        return {"total": len(projects), "projects": [p.to_json() for p in projects]}

    @server.tool()
    def create_project(
        name: ProjectName, namespace: Namespace = "default", config: Config = None
    ) -> dict[str, Any]:
        """Create a new project. Without `config` it gets the default model and no MCP
        servers; a config that does not validate is refused with the key and line at fault."""
        return {"project": store().create(namespace, name, config).to_json()}

    @server.tool(annotations=READ_ONLY)
    def get_project(name: ProjectName, namespace: Namespace = "default") -> dict[str, Any]:
        """Get a project's details and configuration."""
        return {"project": store().get(namespace, name).to_json()}

    @server.tool()
    def update_project(
        name: ProjectName, config: Config, namespace: Namespace = "default"
    ) -> dict[str, Any]:
        """Replace a project's whole configuration (validated before it is written)."""
        return {"project": store().update(namespace, name, config).to_json()}

    @server.tool()
    def delete_project(name: ProjectName, namespace: Namespace = "default") -> dict[str, Any]:
        """Remove a project; returns what it held."""
        return {"project": store().delete(namespace, name).to_json()}

    @server.tool()
    async def chat_completions(
        messages: Annotated[
            list[dict[str, Any]] | str,
            Field(
                description="OpenAI chat messages ([{role, content}, ...]), or just the"
                " user's message as text."
            ),
        ],
        model: Annotated[
            str | None, Field(description="Model name; the default model when omitted.")
        ] = None,
        namespace: Annotated[str | None, Field(description="Namespace of `project`.")] = None,
        project: OptionalProject = None,
        max_tool_rounds: Annotated[int | None, Field(ge=1)] = None,
        include_tool_results: bool = False,
    ) -> dict[str, Any]:
        """Send messages to a model and run its tool calls (MCP servers of the config or
        the project) until it answers; returns an OpenAI chat.completion."""
        state = state_of(namespace, project)
        body: dict[str, Any] = {
            "model": model or state.model_config(None).name,
            "messages": (
                [{"role": "user", "content": messages}] if isinstance(messages, str) else messages
            ),
            "include_tool_results": include_tool_results,
        }
        if max_tool_rounds is not None:
            body["max_tool_rounds"] = max_tool_rounds
        parsed = parse_chat(body)
        outcome = await complete_chat(state, parsed.chat)
        return completion_body(parsed, outcome.finished, outcome.reasoning)

    @server.tool(annotations=READ_ONLY)
    def list_models(
        namespace: Annotated[str | None, Field(description="Namespace of `project`.")] = None,
        project: OptionalProject = None,
    ) -> dict[str, Any]:
        """Get the models a chat can use (the server's, or a project's): OpenAI's list."""
        state = state_of(namespace, project)
        default = state.model_config(None).name
        return {
            "object": "list",
            "data": [
                {"id": n, "object": "model", "owned_by": "farmhand", "default": n == default}
                for n in state.model_names()
            ],
        }

    @server.tool(annotations=READ_ONLY)
    async def search_tools(
        pattern: Annotated[
            str, Field(description="Words or a glob (e.g. 'read*'); '*' lists every tool.")
        ] = "*",
        namespace: Annotated[str | None, Field(description="Namespace of `project`.")] = None,
        project: OptionalProject = None,
    ) -> dict[str, Any]:
        """Find tools of the configured (or the project's) MCP servers, best match first:
        {tools: [{server, name, description, parameters}], pattern, total}."""
        found = await search_tools_of(state_of(namespace, project), pattern)
        return found.to_json()

    @server.tool(annotations=READ_ONLY)
    async def rag_query(
        query: Annotated[str, Field(description="The question, or the words to look for.")],
        collection: Annotated[
            str, Field(description="A collection made with `farmhand rag add`, e.g. 'docs'.")
        ],
        top_k: Annotated[int, Field(ge=1, le=MAX_TOP_K, description="Passages to return.")] = 5,
        mode: Annotated[
            Mode, Field(description="hybrid (words and meaning), keyword or vector.")
        ] = "hybrid",
    ) -> dict[str, Any]:
        """Query the documents of a collection: the passages that best answer `query`,
        best first, each with its file and lines: {collection, query, results}."""
        hits = await query_collection(get_state(), collection, query, top_k=top_k, mode=mode)
        return {
            "collection": collection,
            "query": query,
            "results": [hit.to_json() for hit in hits],
        }

    @server.tool(annotations=READ_ONLY)
    async def list_collections() -> dict[str, Any]:
        """The document collections `rag_query` can search: {collections: [name]}."""
        return {"collections": await collection_names(get_state())}

    if llama is not None:
        register_llama_tools(server, llama)
    return server
