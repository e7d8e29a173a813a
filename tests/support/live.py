"""A real `create_app` under a real uvicorn, in a background thread, on a free loopback port.

The listening socket is bound before uvicorn starts, so a client may connect at once: the
kernel queues the connection until the server accepts it (no waiting, no sleeps).

    with LiveServer(create_app(config, provider_factory=...)) as server:
        OpenAI(base_url=server.url + "/v1", api_key="x").chat.completions.create(...)
"""

from __future__ import annotations

import socket
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import uvicorn
from starlette.types import ASGIApp

from farmhand.config.models import FarmhandConfig, McpServerConfig, ModelConfig

TESTS = Path(__file__).parents[1]
PANTRY_SERVER = TESTS / "toolsets" / "mcp" / "servers" / "pantry_server.py"


def pantry_server(name: str = "pantry") -> McpServerConfig:
    """The pantry test MCP server (tools pid, echo, env) over stdio."""
    return McpServerConfig(name=name, command=sys.executable, args=[str(PANTRY_SERVER)])


SCRIPTED_HOST = "127.0.0.1:9"
"""Where the scripted models say they are (the discard port: nothing answers there)."""


def scripted_config(
    *servers: McpServerConfig,
    models: tuple[str, ...] = ("farm",),
    request_dirs: Sequence[Path] = (),
    http_hosts: Sequence[str] = (),
) -> FarmhandConfig:
    """A config whose models a test's provider_factory replaces with a ScriptedProvider.
    `request_dirs`: let requests start stdio servers with this Python (the test servers),
    with all their tools, and use these folders (the tests folder is always among them);
    `http_hosts`: hosts requests may reach MCP servers at."""
    allowed = [str(TESTS), *map(str, request_dirs)] if request_dirs else []
    return FarmhandConfig.model_validate(
        {
            "server": {
                # Projects written in tests may name the scripted models' address.
                "backend_hosts": [SCRIPTED_HOST],
                "allowed_dirs": allowed,
                "request_servers": {
                    "stdio": bool(allowed),
                    "launchers": [sys.executable],
                    "allow_writes": bool(allowed),
                    "http_hosts": list(http_hosts),
                },
            },
            "mcp": {"servers": [s.model_dump() for s in servers]},
            "runtime": {
                "models": [
                    ModelConfig(
                        name=name,
                        provider="openai",
                        model="scripted",
                        base_url=f"http://{SCRIPTED_HOST}",
                    ).model_dump(exclude_defaults=True)
                    for name in models
                ]
            },
        }
    )


class LiveServer:
    def __init__(self, app: ASGIApp) -> None:
        self.socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.socket.bind(("127.0.0.1", 0))
        self.socket.listen(128)
        self.port: int = self.socket.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.socket]}, daemon=True
        )

    def __enter__(self) -> LiveServer:
        self.thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)
        self.socket.close()
        assert not self.thread.is_alive(), "uvicorn did not shut down within 30 s"
