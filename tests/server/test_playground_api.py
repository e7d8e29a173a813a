"""The playground's own routes over HTTP: the servers' states (refused, idle, restarting
after a failed start, running), and the Responses extension that switches a server off."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
from tests.support.live import PANTRY_SERVER, LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.config.models import McpServerConfig
from farmhand.providers.scripted import ScriptedProvider


def test_server_states_from_refused_to_running(tmp_path: Path) -> None:
    config = scripted_config(
        McpServerConfig(name="shell", command="bash", args=["-c", "true"]),
        McpServerConfig(name="broken", command=sys.executable, args=["-c", "raise SystemExit(3)"]),
        McpServerConfig(name="pantry", command=sys.executable, args=[str(PANTRY_SERVER)]),
    )
    app = create_app(config, home=tmp_path, provider_factory=lambda _: ScriptedProvider())
    with LiveServer(app) as server:
        states = httpx.get(server.url + "/api/mcp/servers").json()["servers"]
        assert [(s["name"], s["state"]) for s in states] == [
            ("shell", "refused"),
            ("broken", "idle"),
            ("pantry", "idle"),
        ]
        assert "allow_unsafe_command" in states[0]["error"]

        listed = httpx.get(server.url + "/api/tools", timeout=60).json()  # starts them
        assert "'broken'" in listed["errors"]
        states = httpx.get(server.url + "/api/mcp/servers").json()["servers"]
        by_name = {s["name"]: s for s in states}
        assert by_name["pantry"]["state"] == "running"
        assert by_name["broken"]["state"] == "restarting" and by_name["broken"]["error"]


def test_disabled_servers_must_be_a_list_of_names(tmp_path: Path) -> None:
    app = create_app(
        scripted_config(), home=tmp_path, provider_factory=lambda _: ScriptedProvider()
    )
    with LiveServer(app) as server:
        for value in ["gate", [""], [3]]:
            body = {"model": "farm", "input": "hi", "disabled_mcp_servers": value}
            reply = httpx.post(server.url + "/v1/responses", json=body)
            assert reply.status_code == 400, reply.text
            assert "disabled_mcp_servers must be a list" in reply.json()["error"]["message"]
