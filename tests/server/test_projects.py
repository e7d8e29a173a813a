"""Projects over HTTP (LlamaFarm's shapes) against a real uvicorn: CRUD, files on disk that
survive a restart, every kind of bad input as a 4xx, and chat with a project's own models
and MCP servers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.live import PANTRY_SERVER, LiveServer, scripted_config

from farmhand.assembly import create_app
from farmhand.config.loader import load_config
from farmhand.config.models import ModelConfig
from farmhand.messages import ToolCall
from farmhand.providers.base import Provider
from farmhand.providers.scripted import ScriptedProvider, Step

PROJECT_CONFIG: dict[str, Any] = {
    "version": "v1",
    "mcp": {
        "servers": [
            {"name": "pantry", "transport": "stdio", "command": sys.executable,
             "args": [str(PANTRY_SERVER)]},
        ]
    },
    "runtime": {
        "models": [
            {"name": "helper", "provider": "openai", "model": "scripted",
             "base_url": "http://127.0.0.1:9"},
        ]
    },
}  # fmt: skip


class Farm:
    def __init__(self, server: LiveServer, script: ScriptedProvider, home: Path) -> None:
        self.server, self.script, self.home = server, script, home
        self.http = httpx.Client(base_url=server.url + "/v1/projects", timeout=30)
        self.seen_models: list[str] = []


def _start(home: Path) -> tuple[LiveServer, ScriptedProvider, list[str]]:
    script = ScriptedProvider()
    seen: list[str] = []

    def factory(model: ModelConfig) -> Provider:
        seen.append(model.name)
        return script

    config = scripted_config(request_dirs=[home])
    app = create_app(config, home=home, provider_factory=factory, api_keys=())
    return LiveServer(app), script, seen


@pytest.fixture
def farm(tmp_path: Path) -> Iterator[Farm]:
    server, script, seen = _start(tmp_path)
    with server:
        farm = Farm(server, script, tmp_path)
        farm.seen_models = seen
        yield farm
    script.assert_done()


def test_create_list_get_update_delete(farm: Farm) -> None:
    created = farm.http.post("/default", json={"name": "alpha"})
    assert created.status_code == 200, created.text
    project = created.json()["project"]
    assert project == {
        "namespace": "default",
        "name": "alpha",
        "config": {"name": "alpha", "namespace": "default", "version": "v1"},
    }
    listed = farm.http.get("/default").json()
    assert listed["total"] == 1
    assert [p["name"] for p in listed["projects"]] == ["alpha"]

    updated = farm.http.put("/default/alpha", json={"config": PROJECT_CONFIG})
    assert updated.status_code == 200, updated.text
    config = updated.json()["project"]["config"]
    assert config["runtime"]["models"][0]["name"] == "helper"
    assert (config["name"], config["namespace"]) == ("alpha", "default")
    got = farm.http.get("/default/alpha").json()["project"]
    assert got["config"] == config

    deleted = farm.http.delete("/default/alpha")
    assert deleted.status_code == 200
    assert deleted.json()["project"]["name"] == "alpha"
    assert farm.http.get("/default/alpha").status_code == 404
    assert farm.http.get("/default").json() == {"total": 0, "projects": []}
    assert not (farm.home / "projects" / "default").exists()


def test_namespaces_are_separate_and_yaml_text_keeps_its_comments(farm: Farm) -> None:
    text = "# the barn's project\nversion: v1\nprompts: []\n"
    assert farm.http.post("/barn", json={"name": "hay", "config": text}).status_code == 200
    assert farm.http.post("/default", json={"name": "hay"}).status_code == 200
    assert farm.http.get("/barn").json()["total"] == 1
    stored = (farm.home / "projects" / "barn" / "hay" / "farmhand.yaml").read_text()
    assert "# the barn's project" in stored
    assert farm.http.get("/nowhere").json() == {"total": 0, "projects": []}


def test_projects_survive_a_restart_and_are_ordinary_config_files(tmp_path: Path) -> None:
    server, _, _ = _start(tmp_path)
    with server:
        http = httpx.Client(base_url=server.url + "/v1/projects", timeout=30)
        assert http.post("/default", json={"name": "keep", "config": PROJECT_CONFIG}).is_success
    server, _, _ = _start(tmp_path)
    with server:
        http = httpx.Client(base_url=server.url + "/v1/projects", timeout=30)
        project = http.get("/default/keep").json()["project"]
        assert project["config"]["runtime"]["models"][0]["name"] == "helper"
        assert http.get("/default").json()["total"] == 1
    # What the CLI reads with --config.
    config = load_config(tmp_path / "projects" / "default" / "keep" / "farmhand.yaml")
    assert config.name == "keep"
    assert config.model().name == "helper"


BAD_CONFIG_TEXT = """version: v1
runtime:
  models:
    - name: helper
      provider: openai
      modle: gpt-4o
"""


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "message"),
    [
        ("POST", "/default", b"{not json", 400, "not valid JSON"),
        ("POST", "/default", [1, 2], 400, "JSON object"),
        ("POST", "/default", {}, 400, "`name` is required"),
        ("POST", "/default", {"name": "bad name!"}, 400, "invalid project name"),
        ("POST", "/bad%20space", {"name": "x"}, 400, "invalid namespace name"),
        ("POST", "/default", {"name": ".."}, 400, "invalid project name"),
        ("POST", "/default", {"name": "x", "config": [1]}, 400, "must be a mapping"),
        ("POST", "/default", {"name": "x", "config_template": "rag"}, 400, "config_template"),
        (
            "POST",
            "/default",
            {"name": "x", "config": {"runtime": {"modles": []}}},
            400,
            "runtime.modles: unknown key 'modles' (did you mean 'models'?)",
        ),
        ("POST", "/default", {"name": "x", "config": BAD_CONFIG_TEXT}, 400, "farmhand.yaml:6:"),
        ("POST", "/default", {"name": "x", "config": "a: [1"}, 400, "invalid YAML"),
        ("POST", "/default", {"name": "x", "config": {"name": "y"}}, 400, "does not match"),
        (
            "POST",
            "/default",
            {"name": "x", "config": {"namespace": "other"}},
            400,
            "namespace: 'other' does not match",
        ),
        (
            "POST",
            "/default",
            {
                "name": "x",
                "config": {
                    "mcp": {
                        "servers": [{"name": "sh", "command": "bash", "allow_unsafe_command": True}]
                    }
                },
            },
            403,
            "allow_unsafe_command can only be set in the operator's config file",
        ),
        ("POST", "/default", {"name": "x", "config": {"mcp": {"servers": [
            {"name": "sh", "command": "bash", "args": ["-c", "id"]}]}}}, 403,
         "'bash' is not a launcher requests may use"),
        (
            "POST",
            "/default",
            {"name": "x", "config": "version: v1\nrag:\n  key: ${env:HOME}\n"},
            400,
            "farmhand.yaml:3: rag.key: ${env:...} is not accepted",
        ),
        ("GET", "/default/missing", None, 404, "does not exist"),
        ("PUT", "/default/missing", {"config": {}}, 404, "does not exist"),
        ("DELETE", "/default/missing", None, 404, "does not exist"),
        ("POST", "/default/missing/chat/completions", {"messages": []}, 404, "does not exist"),
        ("PATCH", "/default/missing", None, 405, "not allowed"),
    ],
)  # fmt: skip
def test_bad_requests_are_4xx_that_say_what_to_fix(
    farm: Farm, method: str, path: str, body: Any, status: int, message: str
) -> None:
    if isinstance(body, bytes):
        reply = farm.http.request(
            method, path, content=body, headers={"content-type": "application/json"}
        )
    else:
        reply = farm.http.request(method, path, json=body)
    assert reply.status_code == status, reply.text
    error = reply.json()["error"]
    assert message in error["message"]
    assert not (farm.home / "projects" / "default" / "x").exists()


def test_existing_project_bad_updates_keep_the_old_config(farm: Farm) -> None:
    assert farm.http.post("/default", json={"name": "alpha"}).is_success
    taken = farm.http.post("/default", json={"name": "alpha"})
    assert taken.status_code == 409
    assert "already exists" in taken.json()["error"]["message"]
    assert farm.http.put("/default/alpha", json={}).status_code == 400
    bad = farm.http.put("/default/alpha", json={"config": BAD_CONFIG_TEXT})
    assert bad.status_code == 400
    assert "runtime.models[0].modle: unknown key 'modle'" in bad.json()["error"]["message"]
    assert farm.http.get("/default/alpha").json()["project"]["config"]["name"] == "alpha"


def test_chat_uses_the_projects_models_and_mcp_servers(farm: Farm) -> None:
    assert farm.http.post("/default", json={"name": "kitchen", "config": PROJECT_CONFIG}).is_success

    def offered(_: Any, tools: Any) -> None:
        assert "pantry:echo" in [t.name for t in tools]

    farm.script.add(
        Step.calls(ToolCall("pantry:echo", {"text": "jam"}), expect=offered),
        Step.text("The pantry says jam."),
    )
    reply = farm.http.post(
        "/default/kitchen/chat/completions",
        json={"messages": [{"role": "user", "content": "ask the pantry"}],
              "include_tool_results": True},
    )  # fmt: skip
    assert reply.status_code == 200, reply.text
    body = reply.json()
    assert body["object"] == "chat.completion"
    assert body["model"] == "helper"  # the project's default model, not the server's "farm"
    assert body["choices"][0]["message"]["content"] == "The pantry says jam."
    assert body["tool_results"][0]["content"] == "jam"
    assert farm.seen_models == ["helper"]

    unknown = farm.http.post(
        "/default/kitchen/chat/completions",
        json={"model": "farm", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert unknown.status_code == 404
    assert "helper" in unknown.json()["error"]["message"]


def test_chat_streams_like_the_openai_dialect(farm: Farm) -> None:
    assert farm.http.post("/default", json={"name": "kitchen", "config": PROJECT_CONFIG}).is_success
    farm.script.add(Step.text("Streaming from the project."))
    with farm.http.stream(
        "POST",
        "/default/kitchen/chat/completions",
        json={"stream": True, "messages": [{"role": "user", "content": "hi"}]},
    ) as reply:
        assert reply.status_code == 200
        assert reply.headers["content-type"].startswith("text/event-stream")
        text = "".join(reply.iter_text())
    assert "Streaming" in text
    assert text.rstrip().endswith("data: [DONE]")
