"""Attacks 2, 3 and 5: what a request may start, read and keep running.

Each attack is sent as an HTTP client would, to a real uvicorn, in every dialect that takes
`mcp_servers`; "nothing ran" is checked with marker files a shell would have created, and
"nothing was read" with the model's own record of what it was offered.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.security.conftest import CHAT, Farm, serve
from tests.support.live import PANTRY_SERVER, scripted_config

from farmhand.config.models import FarmhandConfig

ROUTES = ("/v1/chat/completions", "/api/chat", "/api/tools/search")
LAUNCHERS = ["env", "/usr/bin/env", "timeout", "nice", "nohup", "setsid"]


def body(path: str, **extra: Any) -> dict[str, Any]:
    if path == "/api/tools/search":
        return {"pattern": "*", **extra}
    return {**CHAT, "stream": False, **extra}


def config(**server: Any) -> FarmhandConfig:
    data = scripted_config().model_dump()
    data["server"] = server
    return FarmhandConfig.model_validate(data)


def shell_via(launcher: str, marker: Path) -> dict[str, Any]:
    args = ["10"] if launcher == "timeout" else []
    return {"name": "x", "command": launcher, "args": [*args, "bash", "-c", f"touch {marker}"]}


@pytest.mark.parametrize("path", ROUTES)
@pytest.mark.parametrize("launcher", LAUNCHERS)
def test_no_launcher_runs_a_shell_by_default(
    farm: Farm, tmp_path: Path, path: str, launcher: str
) -> None:
    marker = tmp_path / "pwned"
    server = shell_via(launcher, marker)
    reply = httpx.post(farm.url + path, json=body(path, mcp_servers=[server]), timeout=30)
    assert reply.status_code == 403, reply.text
    assert "server.request_servers.stdio" in reply.text
    assert not marker.exists()
    assert farm.model.turns == []


@pytest.mark.parametrize(
    ("command", "args"),
    [
        *[(launcher, None) for launcher in LAUNCHERS],
        (sys.executable, ["-c", "open('{marker}', 'w')"]),
        ("node", ["-e", "require('fs').writeFileSync('{marker}', '')"]),
        ("perl", ["-e", "open(F, '>{marker}')"]),
    ],
)
def test_with_request_servers_on_only_listed_launchers_run_and_never_inline_code(
    tmp_path: Path, command: str, args: list[str] | None
) -> None:
    marker = tmp_path / "pwned"
    launchers = [sys.executable, "node", "perl"]
    server_config = config(request_servers={"stdio": True, "launchers": launchers})
    server, model = serve(tmp_path, server_config)
    if args is None:
        inline = shell_via(command, marker)
    else:
        inline = {"name": "x", "command": command, "args": [a.format(marker=marker) for a in args]}
    with server:
        for path in ROUTES:
            reply = httpx.post(server.url + path, json=body(path, mcp_servers=[inline]), timeout=30)
            assert reply.status_code == 403, reply.text
    assert not marker.exists()
    assert model.turns == []


@pytest.mark.parametrize("name", ["LD_PRELOAD", "NODE_OPTIONS", "PYTHONSTARTUP", "BASH_ENV"])
def test_env_that_changes_how_a_program_loads_is_refused(tmp_path: Path, name: str) -> None:
    rules = {"stdio": True, "launchers": [sys.executable]}
    server, model = serve(tmp_path, config(request_servers=rules, allowed_dirs=[str(tmp_path)]))
    copy = tmp_path / "pantry.py"
    copy.write_text(PANTRY_SERVER.read_text())
    inline = {"name": "p", "command": sys.executable, "args": [str(copy)], "env": {name: "x"}}
    with server:
        reply = httpx.post(server.url + "/v1/chat/completions", json=body("", mcp_servers=[inline]))
    assert reply.status_code == 403, reply.text
    assert "changes how programs load" in reply.text
    assert model.turns == []


@pytest.mark.parametrize("tools_path", ["/", "/etc", "x/../../../etc", "~"])
def test_tools_path_is_refused_without_allowed_dirs(farm: Farm, tools_path: str) -> None:
    for path in ("/v1/chat/completions",):
        reply = httpx.post(farm.url + path, json=body(path, tools_path=tools_path))
        assert reply.status_code == 403, reply.text
        assert "server.allowed_dirs" in reply.text
    assert farm.model.turns == []


def test_tools_path_stays_inside_allowed_dirs_and_its_tools_only_read(tmp_path: Path) -> None:
    allowed = tmp_path / "shared"
    (allowed / "docs").mkdir(parents=True)
    (allowed / "docs" / "a.txt").write_text("hello")
    (allowed / "escape").symlink_to("/etc")
    server, model = serve(tmp_path, config(allowed_dirs=[str(allowed)]))
    url = "/v1/chat/completions"
    with server:
        for outside in ["/etc", str(allowed / "escape"), str(allowed / "docs/../../..")]:
            refused = httpx.post(server.url + url, json=body(url, tools_path=outside))
            assert refused.status_code == 403, refused.text
        not_a_folder = httpx.post(
            server.url + url, json=body(url, tools_path=str(allowed / "docs" / "a.txt"))
        )
        assert not_a_folder.status_code == 400, not_a_folder.text
        assert model.turns == []
        ok = httpx.post(server.url + url, json=body(url, tools_path=str(allowed / "docs")))
        assert ok.status_code == 200, ok.text
    offered = model.tools[-1]
    assert "filesystem:read_text_file" in offered
    assert not any(t.endswith(("write_file", "edit_file", "move_file")) for t in offered)


def test_a_filesystem_server_rooted_at_root_is_refused(tmp_path: Path) -> None:
    rules = {"stdio": True, "launchers": ["npx", "node"]}
    server, model = serve(tmp_path, config(request_servers=rules, allowed_dirs=[str(tmp_path)]))
    inline = {
        "name": "fs",
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-filesystem", "/"],
    }
    with server:
        reply = httpx.post(server.url + "/v1/chat/completions", json=body("", mcp_servers=[inline]))
    assert reply.status_code == 403, reply.text
    assert "outside the folders" in reply.text
    assert model.turns == []


@pytest.mark.parametrize("path", ROUTES)
def test_servers_per_request_are_bounded_in_every_dialect(farm: Farm, path: str) -> None:
    servers = [f"s{i}" for i in range(11)]
    reply = httpx.post(farm.url + path, json=body(path, mcp_servers=servers))
    assert reply.status_code == 403, reply.text
    assert "at most 10 per request" in reply.text


def test_request_servers_alive_at_once_are_bounded(tmp_path: Path) -> None:
    rules = {"stdio": True, "launchers": [sys.executable], "max_alive": 3, "allow_writes": True}
    server, _ = serve(
        tmp_path, config(request_servers=rules, allowed_dirs=[str(PANTRY_SERVER.parent)])
    )
    url = "/api/tools/search"
    with server:
        for i in range(8):
            inline = {"name": f"p{i}", "command": sys.executable, "args": [str(PANTRY_SERVER)]}
            reply = httpx.post(server.url + url, json=body(url, mcp_servers=[inline]), timeout=60)
            assert reply.status_code == 200, reply.text
            assert f"p{i}:echo" in [t["name"] for t in reply.json()["tools"]]
        pool = server.server.config.app.state.farmhand.pool
        alive = [c for c in pool.connections if not c.closed]
        assert len(alive) == 3
