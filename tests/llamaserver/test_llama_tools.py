"""The llama_* MCP tools (`mcpserver/llama_tools.py`) as a caller sees them through the real
MCP client (in-process): the 19 tools listed with their documented defaults, the results they
shape from llama-server's answers (rerank, LoRA adapters, router load/unload, health and
slots, tokenize, embeddings, metrics, props), argument validation, and the error texts for a
server that is loading, wants an API key or is not running. The llama-server is
`tests/support/fake_llama_server.py`, for what the real test model cannot do (its docstring
says why each endpoint is faked); the real one runs in `tests/e2e/test_llama_server_real.py`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from tests.support.fake_llama_server import FakeLlamaServer
from tests.support.tool_calls import ToolCalls, text_of

from farmhand.llamaserver.settings import LlamaServerSettings
from farmhand.mcpserver.llama_tools import LlamaTools, build_llama_server

pytestmark = pytest.mark.anyio

ALL_TOOLS = {
    "llama_health", "llama_props", "llama_models", "llama_slots", "llama_metrics",
    "llama_tokenize", "llama_detokenize", "llama_apply_template",
    "llama_complete", "llama_chat", "llama_embed", "llama_infill", "llama_rerank",
    "llama_load_model", "llama_unload_model", "llama_lora_list", "llama_lora_set",
    "llama_start", "llama_stop",
}  # fmt: skip


class Session(ToolCalls):
    def __init__(self, client: Client, fake: FakeLlamaServer) -> None:
        super().__init__(client)
        self.fake = fake


async def _session(
    fake: FakeLlamaServer, tmp_path: Path, **settings: Any
) -> AsyncIterator[Session]:
    tools = LlamaTools(
        LlamaServerSettings(url="http://llama.test:8080", **settings),
        log_dir=tmp_path,
        transport=httpx.ASGITransport(app=fake.app),
    )
    try:
        async with Client(build_llama_server(tools)) as client:
            yield Session(client, fake)
    finally:
        await tools.aclose()


@pytest.fixture
async def llama(tmp_path: Path) -> AsyncIterator[Session]:
    async for session in _session(FakeLlamaServer(), tmp_path):
        yield session


async def test_the_19_tools_are_listed_with_the_documented_defaults(llama: Session) -> None:
    tools = {tool.name: tool for tool in (await llama.client.list_tools()).tools}
    assert set(tools) == ALL_TOOLS
    complete = tools["llama_complete"].input_schema["properties"]
    assert {k: complete[k]["default"] for k in ("max_tokens", "temperature", "top_p", "top_k")} == {
        "max_tokens": 256, "temperature": 0.7, "top_p": 0.9, "top_k": 40,
    }  # fmt: skip
    chat = tools["llama_chat"].input_schema
    assert chat["required"] == ["messages"]
    sampling = ("max_tokens", "temperature", "top_p")
    assert {k: chat["properties"][k]["default"] for k in sampling} == {
        "max_tokens": 256, "temperature": 0.7, "top_p": 0.9,
    }  # fmt: skip
    infill = tools["llama_infill"].input_schema
    assert infill["required"] == ["input_prefix", "input_suffix"]
    assert {k: infill["properties"][k]["default"] for k in ("max_tokens", "temperature")} == {
        "max_tokens": 256, "temperature": 0.7,
    }  # fmt: skip
    start = tools["llama_start"].input_schema
    assert start["required"] == ["model"]
    assert {k: start["properties"][k]["default"] for k in ("port", "ctx_size", "n_gpu_layers")} == {
        "port": 8080, "ctx_size": 2048, "n_gpu_layers": -1,
    }  # fmt: skip
    tokenize = tools["llama_tokenize"].input_schema["properties"]
    assert (tokenize["add_special"]["default"], tokenize["with_pieces"]["default"]) == (True, False)
    assert tools["llama_health"].annotations.read_only_hint is True  # type: ignore[union-attr]
    assert tools["llama_stop"].annotations.destructive_hint is True  # type: ignore[union-attr]


async def test_rerank_returns_documents_best_first(llama: Session) -> None:
    docs = ["cats purr", "the llama server serves llama models", "a llama"]
    ranked = await llama.ok("llama_rerank", query="llama server", documents=docs)
    assert [r["index"] for r in ranked["results"]] == [1, 2, 0]
    assert ranked["results"][0] == {"index": 1, "relevance_score": 2.0, "document": docs[1]}


async def test_lora_list_and_set_return_the_updated_adapters(llama: Session) -> None:
    listed = await llama.ok("llama_lora_list")
    assert [(a["id"], a["scale"]) for a in listed] == [(0, 1.0), (1, 0.0)]
    updated = await llama.ok(
        "llama_lora_set", adapters=[{"id": 0, "scale": 0}, {"id": 1, "scale": 0.5}]
    )
    assert [(a["id"], a["scale"]) for a in updated] == [(0, 0.0), (1, 0.5)]
    assert (
        "POST",
        "/lora-adapters",
        [{"id": 0, "scale": 0.0}, {"id": 1, "scale": 0.5}],
    ) in llama.fake.requests
    message = await llama.error("llama_lora_set", adapters=[{"id": 7, "scale": 1}])
    assert message == "Error: llama-server answered 400 to POST /lora-adapters: invalid adapter id"


async def test_router_load_and_unload(llama: Session) -> None:
    loaded = await llama.ok("llama_load_model", model="coder.gguf")
    assert loaded == {"model": "coder.gguf", "status": "loaded", "response": {"success": True}}
    assert llama.fake.models["coder.gguf"] == "loaded"
    assert llama.fake.model_listings == 2  # saw "loading", waited, then saw "loaded"
    await llama.ok("llama_unload_model", model="chat.gguf")
    assert llama.fake.models["chat.gguf"] == "unloaded"
    broken = await llama.error("llama_load_model", model="broken.gguf")
    assert broken == (
        "Error: llama-server could not load model 'broken.gguf': its process exited with"
        " code 1. llama-server's log says why."
    )
    missing = await llama.error("llama_load_model", model="nope.gguf")
    assert missing.startswith("Error: llama-server knows no model 'nope.gguf' to load.")
    assert "llama_models lists the ones it has" in missing


async def test_health_counts_slots_and_tokenize_gives_pieces(llama: Session) -> None:
    health = await llama.ok("llama_health")
    assert health == {
        "status": "ok",
        "url": "http://llama.test:8080",
        "slots_idle": 2,
        "slots_processing": 1,
    }
    tokens = await llama.ok("llama_tokenize", content="Hello", with_pieces=True)
    assert tokens == {"tokens": [9707, 999], "count": 2, "pieces": ["Hello", "\ufffd"]}
    assert (
        "POST",
        "/tokenize",
        {"content": "Hello", "add_special": True, "with_pieces": True},
    ) in llama.fake.requests


async def test_embedding_is_one_flat_vector(llama: Session) -> None:
    assert await llama.ok("llama_embed", content="x") == {
        "embedding": [0.25, -0.5, 0.75],
        "dimensions": 3,
    }


async def test_metrics_come_back_as_raw_text(llama: Session) -> None:
    result = await llama.client.call_tool("llama_metrics", {})
    assert not result.is_error
    assert text_of(result).startswith("# HELP llamacpp:prompt_tokens_total")


async def test_props_change_passes_on_the_servers_reason(llama: Session) -> None:
    assert (await llama.ok("llama_props"))["total_slots"] == 3
    message = await llama.error("llama_props", default_generation_settings={"temperature": 0.1})
    assert "Start it with `--props`" in message
    assert message.startswith("Error: llama-server answered 501 to POST /props")


async def test_invalid_arguments_name_the_field_and_the_problem(llama: Session) -> None:
    missing = await llama.error("llama_tokenize")
    assert missing == "Error: Invalid arguments for llama_tokenize: content: Field required"
    wrong = await llama.error("llama_complete", prompt="x", max_tokens=0, top_p=2)
    assert wrong.startswith("Error: Invalid arguments for llama_complete:")
    assert "max_tokens: Input should be greater than or equal to 1 (got 0)" in wrong
    assert "top_p: Input should be less than or equal to 1 (got 2)" in wrong
    role = await llama.error("llama_chat", messages=[{"role": "tool", "content": "x"}])
    assert "messages.0.role: Input should be 'system', 'user' or 'assistant'" in role
    assert llama.fake.requests == []  # nothing invalid reached the server


async def test_health_without_slots_is_still_ok(tmp_path: Path) -> None:
    async for llama in _session(FakeLlamaServer(slots=False), tmp_path):
        assert await llama.ok("llama_health") == {"status": "ok", "url": "http://llama.test:8080"}
        message = await llama.error("llama_slots")
        assert message == (
            "Error: llama-server answered 501 to GET /slots:"
            " This server does not support slots endpoint."
        )


async def test_a_loading_model_is_reported_as_such(tmp_path: Path) -> None:
    async for llama in _session(FakeLlamaServer(loading=True), tmp_path):
        assert (await llama.ok("llama_health"))["status"] == "loading_model"
        message = await llama.error("llama_tokenize", content="x")
        assert message.startswith("Error: llama-server is still loading its model.")


async def test_the_api_key_is_sent_and_a_wrong_one_explained(tmp_path: Path) -> None:
    async for llama in _session(FakeLlamaServer(api_key="sesame"), tmp_path, api_key="sesame"):
        assert (await llama.ok("llama_tokenize", content="x"))["tokens"] == [9707, 999]
    async for llama in _session(FakeLlamaServer(api_key="sesame"), tmp_path, api_key="wrong"):
        message = await llama.error("llama_tokenize", content="x")
        assert "Invalid API Key" in message and "Set LLAMA_API_KEY" in message


async def test_a_server_that_is_not_running(tmp_path: Path, closed_port: int) -> None:
    tools = LlamaTools(LlamaServerSettings(url=f"http://127.0.0.1:{closed_port}"), log_dir=tmp_path)
    async with Client(build_llama_server(tools)) as client:
        for tool, arguments in [("llama_health", {}), ("llama_models", {}), ("llama_stop", {})]:
            result = await client.call_tool(tool, arguments)
            assert result.is_error
            if tool != "llama_stop":
                assert text_of(result) == (
                    f"Error: Cannot connect to llama-server at http://127.0.0.1:{closed_port}."
                    " Is it running? Use llama_start or start it manually."
                )
            else:
                assert text_of(result).startswith("Error: No llama-server started by llama_start")
    await tools.aclose()
