"""llama.cpp's llama-server as 19 MCP tools, each mapped to one of its endpoints.

    server      llama_health  llama_props  llama_models  llama_slots  llama_metrics
    tokens      llama_tokenize  llama_detokenize  llama_apply_template
    inference   llama_complete  llama_chat  llama_embed  llama_infill  llama_rerank
    models      llama_load_model  llama_unload_model          (router mode)
    lora        llama_lora_list  llama_lora_set
    process     llama_start  llama_stop

Names, schemas, defaults and error texts follow llama-mcp-server (see the seed
`003_ad9dac2031eb20db.txt`), so prompts and client configs written for it carry over.
Served over stdio by `farmhand mcp llama`, and on `farmhand serve`'s /mcp when the config
has a `llama_server:` section. Results are llama-server's JSON, reshaped only where its
shape varies by version (tokenize pieces, embeddings) or where the tool promises more
(health's slot counts, rerank's order).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any, Literal

import httpx
from mcp import types
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from farmhand.config.models import LlamaServerConfig
from farmhand.errors import LlamaServerError, PolicyError
from farmhand.llamaserver.client import LlamaServerClient
from farmhand.llamaserver.process import LlamaServerProcess, StartOptions
from farmhand.llamaserver.reshape import (
    embedding_result,
    health_result,
    props_after_change,
    rerank_result,
    tokenize_result,
)
from farmhand.llamaserver.router import change_model
from farmhand.llamaserver.settings import HEALTH_TIMEOUT_MS, LlamaServerSettings
from farmhand.mcpserver.results import ToolServer, ok
from farmhand.toolsets.mcp.policy import RequestPolicy

READ_ONLY = types.ToolAnnotations(read_only_hint=True, open_world_hint=False)
CHANGES_SERVER = types.ToolAnnotations(read_only_hint=False, open_world_hint=False)
STOPS_SERVER = types.ToolAnnotations(
    read_only_hint=False, destructive_hint=True, open_world_hint=False
)


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant"]
    content: str


class LoraScale(BaseModel):
    id: Annotated[int, Field(ge=0, description="Adapter ID (from llama_lora_list)")]
    scale: Annotated[float, Field(description="Scale factor (0 to disable)")]


Messages = Annotated[list[ChatMessage], Field(min_length=1, description="Chat messages")]
MaxTokens = Annotated[int, Field(ge=1, description="Maximum tokens to generate")]
Temperature = Annotated[float, Field(ge=0, description="Sampling temperature")]
TopP = Annotated[float, Field(ge=0, le=1, description="Nucleus sampling threshold")]
Stop = Annotated[list[str] | None, Field(description="Stop sequences")]
Seed = Annotated[int | None, Field(description="Random seed for reproducibility")]
RoutedModel = Annotated[
    str | None, Field(description="Router mode: the model that answers (see llama_models)")
]


class LlamaTools:
    """What the tools share: the client of the llama-server they talk to and the one
    llama_start may have started. `aclose()` stops that server and closes the client."""

    def __init__(
        self,
        settings: LlamaServerSettings,
        *,
        log_dir: Path,
        transport: httpx.AsyncBaseTransport | None = None,
        process: LlamaServerProcess | None = None,
        policy: RequestPolicy | None = None,
        allow_extra_args: bool = True,
    ) -> None:
        self.client = LlamaServerClient(settings, transport=transport)
        self.process = process or LlamaServerProcess(log_dir)
        self.policy = policy
        """Set where callers are not the local user (HTTP /mcp): what llama_start may use."""
        self.allow_extra_args = allow_extra_args

    def check_start(self, model: str, extra_args: Sequence[str]) -> None:
        """Over HTTP, llama_start runs only models inside server.allowed_dirs, and extra
        flags only when the operator allows them (PolicyError otherwise)."""
        if self.policy is None:
            return
        self.policy.admit_path(model, "llama_start model")
        if extra_args and not self.allow_extra_args:
            raise PolicyError(
                "llama_start extra_args are refused over HTTP (some llama-server flags write"
                " files); the operator can allow them with llama_server.allow_extra_args"
            )

    async def aclose(self) -> None:
        try:
            await self.process.aclose()
        finally:
            await self.client.aclose()


def llama_tools_for(
    section: LlamaServerConfig | None, home: Path, policy: RequestPolicy | None = None
) -> LlamaTools | None:
    """The llama_* tools' state for a config's `llama_server:` section (None: no tools).
    The section's values win over the LLAMA_* variables, which win over the defaults.
    `policy`: the tools are reached over HTTP, so llama_start is held to it."""
    if section is None:
        return None
    settings = LlamaServerSettings.from_env().overridden(
        url=section.url, timeout_ms=section.timeout, api_key=section.api_key
    )
    return LlamaTools(
        settings,
        log_dir=home / "logs",
        policy=policy,
        allow_extra_args=policy is None or section.allow_extra_args,
    )


def build_llama_server(llama: LlamaTools) -> MCPServer:
    """An MCP server with just the llama_* tools (what `farmhand mcp llama` serves)."""
    server = ToolServer(
        "farmhand-llama",
        instructions=(
            "Tools for llama.cpp's llama-server: check it, tokenize, complete, chat, embed,"
            " rerank, manage models and LoRA adapters, start and stop it. Start with"
            " llama_health; if it is not running, llama_start starts one from a GGUF file."
        ),
        subscriptions=False,
    )
    register_llama_tools(server, llama)
    return server


def register_llama_tools(server: MCPServer, llama: LlamaTools) -> None:
    """Add the 19 llama_* tools to `server`. A LlamaServerError a tool raises is its
    `isError` answer (ToolServer turns it into "Error: ...")."""
    client = llama.client

    @server.tool(annotations=READ_ONLY)
    async def llama_health() -> types.CallToolResult:
        """Check whether llama-server is running: status (ok, loading_model, error) and how
        many slots are idle and processing. Answers within 5 seconds."""
        began = time.monotonic()
        health = await client.request("GET", "/health", timeout_ms=HEALTH_TIMEOUT_MS, accept={503})
        slots = None
        # The counts are extra: a server without /slots (--no-slots, router mode) or one
        # slow to list them is still healthy, within the same 5 s.
        left_ms = HEALTH_TIMEOUT_MS - round((time.monotonic() - began) * 1000)
        if health.status_code == 200 and left_ms > 0:
            with contextlib.suppress(LlamaServerError):
                slots = await client.get_json("/slots", timeout_ms=left_ms)
        return ok(health_result(client.url, health, slots))

    @server.tool(annotations=CHANGES_SERVER)
    async def llama_props(
        default_generation_settings: Annotated[
            dict[str, Any] | None,
            Field(
                description="Settings to change (e.g. temperature, top_p, top_k); omit to"
                " just read the properties. Changing needs llama-server started with --props."
            ),
        ] = None,
    ) -> types.CallToolResult:
        """Get llama-server's properties (model, context size, default generation settings,
        chat template), or change its default generation settings and return the result."""
        if default_generation_settings is None:
            return ok(await client.get_json("/props"))
        await client.post_json(
            "/props", {"default_generation_settings": default_generation_settings}
        )
        return ok(props_after_change(await client.get_json("/props"), default_generation_settings))

    @server.tool(annotations=READ_ONLY)
    async def llama_models() -> types.CallToolResult:
        """List the models llama-server serves (OpenAI's model list)."""
        return ok(await client.get_json("/v1/models"))

    @server.tool(annotations=READ_ONLY)
    async def llama_slots() -> types.CallToolResult:
        """Show each slot (one concurrent request each): whether it is processing, its
        context, and its sampling settings."""
        return ok(await client.get_json("/slots"))

    @server.tool(annotations=READ_ONLY)
    async def llama_metrics() -> types.CallToolResult:
        """Prometheus metrics as raw text (tokens processed, throughput, busy slots). Needs
        llama-server started with --metrics (llama_start does that)."""
        return ok(await client.get_text("/metrics"))

    @server.tool(annotations=READ_ONLY)
    async def llama_tokenize(
        content: Annotated[str, Field(description="Text to tokenize")],
        add_special: Annotated[bool, Field(description="Add BOS/EOS tokens")] = True,
        with_pieces: Annotated[bool, Field(description="Include token strings")] = False,
        model: RoutedModel = None,
    ) -> types.CallToolResult:
        """Convert text to the model's token IDs (and, with with_pieces, their text)."""
        body = _sampling(
            content=content, add_special=add_special, with_pieces=with_pieces, model=model
        )
        return ok(tokenize_result(await client.post_json("/tokenize", body)))

    @server.tool(annotations=READ_ONLY)
    async def llama_detokenize(
        tokens: Annotated[
            list[Annotated[int, Field(ge=0)]], Field(description="Token IDs to convert")
        ],
        model: RoutedModel = None,
    ) -> types.CallToolResult:
        """Convert token IDs back to text."""
        return ok(await client.post_json("/detokenize", _sampling(tokens=tokens, model=model)))

    @server.tool(annotations=READ_ONLY)
    async def llama_apply_template(
        messages: Annotated[list[ChatMessage], Field(description="Chat messages to format")],
        model: RoutedModel = None,
    ) -> types.CallToolResult:
        """Format chat messages with the model's chat template, without generating: the
        prompt the model would see."""
        body = _sampling(messages=[m.model_dump() for m in messages], model=model)
        return ok(await client.post_json("/apply-template", body))

    @server.tool(annotations=READ_ONLY)
    async def llama_complete(
        prompt: Annotated[str, Field(description="The prompt to complete")],
        max_tokens: MaxTokens = 256,
        temperature: Temperature = 0.7,
        top_p: TopP = 0.9,
        top_k: Annotated[int, Field(ge=0, description="Top-k sampling")] = 40,
        stop: Stop = None,
        seed: Seed = None,
        model: RoutedModel = None,
    ) -> types.CallToolResult:
        """Continue a raw prompt: the generated text, why it stopped, and timings."""
        body = _sampling(
            prompt=prompt, n_predict=max_tokens, temperature=temperature, top_p=top_p,
            top_k=top_k, stop=stop, seed=seed, model=model,
        )  # fmt: skip
        return ok(await client.post_json("/completion", body))

    @server.tool(annotations=READ_ONLY)
    async def llama_chat(
        messages: Messages,
        max_tokens: MaxTokens = 256,
        temperature: Temperature = 0.7,
        top_p: TopP = 0.9,
        stop: Stop = None,
        seed: Seed = None,
        model: RoutedModel = None,
    ) -> types.CallToolResult:
        """Chat completion through the model's chat template (OpenAI's response shape)."""
        body = _sampling(
            messages=[m.model_dump() for m in messages], max_tokens=max_tokens,
            temperature=temperature, top_p=top_p, stop=stop, seed=seed, model=model,
        )  # fmt: skip
        return ok(await client.post_json("/v1/chat/completions", body))

    @server.tool(annotations=READ_ONLY)
    async def llama_embed(
        content: Annotated[str, Field(description="Text to embed")],
        model: RoutedModel = None,
    ) -> types.CallToolResult:
        """An embedding vector for the text. Needs llama-server started with --embeddings
        (llama_start's `embeddings: true`)."""
        answer = await client.post_json("/embedding", _sampling(content=content, model=model))
        return ok(embedding_result(answer))

    @server.tool(annotations=READ_ONLY)
    async def llama_infill(
        input_prefix: Annotated[str, Field(description="Code before cursor")],
        input_suffix: Annotated[str, Field(description="Code after cursor")],
        max_tokens: MaxTokens = 256,
        temperature: Temperature = 0.7,
        stop: Stop = None,
        model: RoutedModel = None,
    ) -> types.CallToolResult:
        """Fill in the middle: code to insert between prefix and suffix (needs a model with
        fill-in-the-middle tokens, such as Qwen2.5-Coder or CodeLlama)."""
        body = _sampling(
            input_prefix=input_prefix, input_suffix=input_suffix, n_predict=max_tokens,
            temperature=temperature, stop=stop, model=model,
        )  # fmt: skip
        return ok(await client.post_json("/infill", body))

    @server.tool(annotations=READ_ONLY)
    async def llama_rerank(
        query: Annotated[str, Field(description="Search query")],
        documents: Annotated[list[str], Field(min_length=1, description="Documents to rerank")],
        model: RoutedModel = None,
    ) -> types.CallToolResult:
        """Rank documents by relevance to the query, most relevant first. Needs a reranking
        model and llama-server started with --reranking."""
        body = _sampling(query=query, documents=documents, model=model)
        return ok(rerank_result(await client.post_json("/reranking", body), documents))

    @server.tool(annotations=CHANGES_SERVER)
    async def llama_load_model(
        model: Annotated[str, Field(min_length=1, description="Model name or path to load")],
    ) -> types.CallToolResult:
        """Load a model (router mode only: llama-server started without -m; llama_start
        with a folder of GGUF files); returns once the model is ready to answer."""
        return ok(await change_model(client, "load", model))

    @server.tool(annotations=CHANGES_SERVER)
    async def llama_unload_model(
        model: Annotated[str, Field(min_length=1, description="Model to unload")],
    ) -> types.CallToolResult:
        """Unload a model (router mode only), freeing its memory."""
        return ok(await change_model(client, "unload", model))

    @server.tool(annotations=READ_ONLY)
    async def llama_lora_list() -> types.CallToolResult:
        """List the LoRA adapters llama-server loaded (--lora), with their ids and scales."""
        return ok(await client.get_json("/lora-adapters"))

    @server.tool(annotations=CHANGES_SERVER)
    async def llama_lora_set(
        adapters: Annotated[list[LoraScale], Field(min_length=1)],
    ) -> types.CallToolResult:
        """Set LoRA adapter scales (0 disables one; several may be active); returns the
        updated adapter list."""
        await client.post_json("/lora-adapters", [a.model_dump() for a in adapters])
        return ok(await client.get_json("/lora-adapters"))

    @server.tool(annotations=CHANGES_SERVER)
    async def llama_start(
        model: Annotated[
            str,
            Field(
                min_length=1,
                description="Path to GGUF model file (or a folder of GGUF files: router mode)",
            ),
        ],
        port: Annotated[int, Field(ge=1, le=65535, description="Port to listen on")] = 8080,
        ctx_size: Annotated[int, Field(ge=0, description="Context size")] = 2048,
        n_gpu_layers: Annotated[int, Field(ge=-1, description="GPU layers (-1 = all)")] = -1,
        threads: Annotated[int | None, Field(ge=1, description="CPU threads")] = None,
        embeddings: Annotated[bool, Field(description="Serve embeddings (llama_embed)")] = False,
        pooling: Annotated[
            Literal["none", "mean", "cls", "last", "rank"] | None,
            Field(
                description="How llama_embed pools token vectors into one; default: the"
                " model's own (none for a chat model: one vector per token)"
            ),
        ] = None,
        metrics: Annotated[bool, Field(description="Serve /metrics (llama_metrics)")] = True,
        extra_args: Annotated[
            list[str], Field(description="More llama-server flags, e.g. ['--lora', 'a.gguf']")
        ] = [],  # noqa: B006 (pydantic copies defaults)
    ) -> types.CallToolResult:
        """Start llama-server on 127.0.0.1 as a child process and wait until it is healthy;
        returns its pid, URL and log file. Refused while one started here is running."""
        llama.check_start(model, extra_args)
        options = StartOptions(
            model=model, port=port, ctx_size=ctx_size, n_gpu_layers=n_gpu_layers,
            threads=threads, embeddings=embeddings, pooling=pooling, metrics=metrics,
            extra_args=tuple(extra_args), api_key=client.settings.api_key,
        )  # fmt: skip
        started = await llama.process.start(options)
        client.retarget(started["url"])
        return ok(started)

    @server.tool(annotations=STOPS_SERVER)
    async def llama_stop() -> types.CallToolResult:
        """Stop the llama-server llama_start started: SIGTERM, then SIGKILL if it has not
        exited within 10 seconds."""
        stopped = await llama.process.stop()
        client.retarget(client.settings.url)
        return ok(stopped)


def _sampling(**fields: Any) -> dict[str, Any]:
    """A request body without the options the caller left unset (llama-server's own
    defaults apply to those)."""
    return {key: value for key, value in fields.items() if value is not None}
