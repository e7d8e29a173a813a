"""/mcp over real HTTP (create_app under uvicorn): DNS-rebinding checks, a project that uses
its own server's /mcp without deadlock, and the MCP inspector CLI (Node 22 from npm)."""

from __future__ import annotations

import json
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from tests.support.inspector import INSPECTOR, NODE, inspector
from tests.support.live import LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import ModelConfig
from farmhand.messages import ToolCall
from farmhand.providers.base import Provider
from farmhand.providers.scripted import ScriptedProvider, Step

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[LiveServer, ScriptedProvider]]:
    script = ScriptedProvider()

    def factory(_: ModelConfig) -> Provider:
        return script

    app = create_app(
        scripted_config(http_hosts=["127.0.0.1"]), home=tmp_path, provider_factory=factory,
        api_keys=(),
        allowed_hosts=["farm.example"],
    )  # fmt: skip
    # Leaving also proves shutdown: uvicorn drains while the pool (after the self-reference
    # test) still holds a session with its own /mcp.
    with LiveServer(app) as server:
        yield server, script
    script.assert_done()


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({}, 200),
        ({"Host": "localhost:1234"}, 200),
        ({"Host": "farm.example:8080"}, 200),  # an operator-allowed name
        # A page on another local port is a web page like any other (server.allowed_origins).
        ({"Origin": "http://127.0.0.1:3000"}, 403),
        ({"Host": "evil.example"}, 421),
        ({"Host": "evil.example:80"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "https://127.0.0.1.evil.example"}, 403),
    ],
)
def test_dns_rebinding_protection(
    served: tuple[LiveServer, ScriptedProvider], headers: dict[str, str], status: int
) -> None:
    server, _ = served
    reply = httpx.post(
        server.url + "/mcp", json=INITIALIZE, headers={**MCP_HEADERS, **headers}, timeout=30
    )
    assert reply.status_code == status, reply.text


@pytest.mark.anyio
async def test_a_project_can_use_its_own_server_without_deadlock(
    served: tuple[LiveServer, ScriptedProvider],
) -> None:
    """chat_completions arrives over /mcp; the model's tool call goes back to the same /mcp
    (through the pool, a second session) and is answered while the first call waits."""
    server, script = served
    itself = {"name": "self", "transport": "http", "base_url": server.url + "/mcp"}
    helper = {"name": "helper", "provider": "openai", "model": "scripted"}
    helper |= {"base_url": "http://127.0.0.1:9", "mcp_servers": ["self"]}
    config = {"mcp": {"servers": [itself]}, "runtime": {"models": [helper]}}
    async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
        created = await http.post("/v1/projects/default", json={"name": "loop", "config": config})
        assert created.status_code == 200, created.text
    script.add(
        Step.calls(ToolCall("self:list_projects", {"namespace": "default"})),
        Step.calls(ToolCall("self:get_project", {"name": "loop"})),
        Step.text("I found myself."),
    )
    async with Client(server.url + "/mcp", read_timeout_seconds=60) as client:
        result = await client.call_tool(
            "chat_completions",
            {"messages": "who am I?", "project": "loop", "include_tool_results": True},
        )
    assert not result.is_error, result.content
    reply: dict[str, Any] = json.loads(result.content[0].text)  # type: ignore[union-attr]
    assert reply["choices"][0]["message"]["content"] == "I found myself."
    listed, got = (json.loads(r["content"]) for r in reply["tool_results"])
    assert [p["name"] for p in listed["projects"]] == ["loop"]
    assert got["project"]["config"]["mcp"]["servers"][0]["name"] == "self"


def _inspector(url: str, *args: str, home: Path) -> Any:
    return inspector(url, "--transport", "http", *args, home=home)


def test_node_is_version_22() -> None:
    assert NODE.exists(), f"{NODE} missing: run `make setup` (npm ci)"
    version = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("v22."), version.stdout


def test_mcp_inspector_cli_lists_and_calls_the_tools(
    served: tuple[LiveServer, ScriptedProvider], tmp_path: Path
) -> None:
    server, script = served
    url = server.url + "/mcp"
    version = json.loads((INSPECTOR / "package.json").read_text())["version"]
    assert version.startswith("2."), version
    listed = _inspector(url, "--method", "tools/list", home=tmp_path)
    names = {tool["name"] for tool in listed["tools"]}
    assert {"list_projects", "create_project", "chat_completions", "search_tools"} <= names

    created = _inspector(
        url, "--method", "tools/call", "--tool-name", "create_project",
        "--tool-arg", "name=inspected", "--tool-arg", "namespace=barn", home=tmp_path,
    )  # fmt: skip
    assert not created.get("isError"), created
    assert json.loads(created["content"][0]["text"])["project"]["name"] == "inspected"
    assert httpx.get(server.url + "/v1/projects/barn/inspected").status_code == 200

    script.add(Step.text("Hello, inspector."))
    chat = _inspector(
        url, "--method", "tools/call", "--tool-name", "chat_completions",
        "--tool-arg", "messages=hi", home=tmp_path,
    )  # fmt: skip
    reply = json.loads(chat["content"][0]["text"])
    assert reply["choices"][0]["message"]["content"] == "Hello, inspector."


@pytest.mark.anyio
@pytest.mark.parametrize(("mode", "version"), [("auto", "2026-07-28"), ("legacy", "2025-11-25")])
async def test_both_protocol_revisions_are_answered(
    served: tuple[LiveServer, ScriptedProvider], mode: str, version: str
) -> None:
    server, _ = served
    async with Client(server.url + "/mcp", mode=mode) as client:  # type: ignore[arg-type]
        assert client.protocol_version == version
        names = {t.name for t in (await client.list_tools()).tools}
        assert "list_models" in names
        listed = await client.call_tool("list_models", {})
    assert not listed.is_error, listed.content


def raw_post(port: int, body: bytes, headers: dict[str, str]) -> tuple[int, bytes]:
    """One HTTP/1.1 POST written by hand: header values go out byte for byte, padding
    included (an HTTP client library would trim or refuse them)."""
    lines = ["POST /mcp HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    lines += [f"Content-Length: {len(body)}", "", ""]
    with socket.create_connection(("127.0.0.1", port), timeout=30) as sock:
        sock.sendall("\r\n".join(lines).encode() + body)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    status = int(answer.split(b" ", 2)[1])
    return status, answer.split(b"\r\n\r\n", 1)[1]


@pytest.mark.parametrize("name", ["list_models", "  list_models  ", "\tlist_models"])
def test_a_padded_mcp_name_header_is_accepted(
    served: tuple[LiveServer, ScriptedProvider], name: str
) -> None:
    """SEP-2243 / RFC 9110 §5.5: whitespace around a header value is not part of it."""
    server, _ = served
    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "list_models", "arguments": {}, "_meta": meta}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": name,
    }
    status, answer = raw_post(server.port, body.encode(), headers)
    assert status == 200, answer
    reply = json.loads(answer.decode().split("data: ", 1)[-1].split("\n", 1)[0])
    assert reply["result"]["isError"] is False, reply
    assert json.loads(reply["result"]["content"][0]["text"])["data"], reply
    wrong = raw_post(server.port, body.encode(), {**headers, "Mcp-Name": " other_tool "})
    assert wrong[0] == 400, wrong
