"""A real farmhand server for the Ollama API tests: `create_app` under uvicorn on a free
loopback port, in a background thread, with a scripted provider."""

from __future__ import annotations

import socket
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from tests.support.live import TESTS

from farmhand.assembly import create_app
from farmhand.config.models import (
    FarmhandConfig,
    McpConfig,
    McpServerConfig,
    ModelConfig,
    RuntimeConfig,
)
from farmhand.config.server import RequestServersConfig, ServerConfig
from farmhand.providers.base import Provider

SERVERS = Path(__file__).parent / "servers"
PANTRY = Path(__file__).parent.parent / "toolsets" / "mcp" / "servers" / "pantry_server.py"
FILES = SERVERS / "files_server.py"
# A client's own tool, in Ollama's (OpenAI's) shape.
WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}


def stdio_server(name: str, script: Path) -> McpServerConfig:
    return McpServerConfig(name=name, command=sys.executable, args=[str(script)])


def make_config(*servers: McpServerConfig) -> FarmhandConfig:
    """Two scripted models; requests may start the test servers (this Python, scripts under
    tests/) with all their tools."""
    model = ModelConfig(name="scripted", provider="openai", model="scripted-model")
    other = ModelConfig(name="plain", provider="openai", model="plain-model", mcp_servers=[])
    return FarmhandConfig(
        runtime=RuntimeConfig(models=[model, other]),
        mcp=McpConfig(servers=list(servers)),
        server=ServerConfig(
            allowed_dirs=[str(TESTS)],
            request_servers=RequestServersConfig(
                stdio=True, launchers=[sys.executable], allow_writes=True
            ),
        ),
    )


@contextmanager
def serving(config: FarmhandConfig, provider: Provider, home: Path) -> Iterator[str]:
    """The base URL of a running server; stopped (MCP pool and tasks closed) on exit."""
    app = create_app(config, home=home, provider_factory=lambda _: provider, api_keys=())
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()
