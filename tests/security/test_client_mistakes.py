"""Issue 25, finding 5: client mistakes that were 5xx are 4xx in the dialect's own shape.

Bad MCP URLs (ValueError), 400-digit integers (OverflowError), `/api/generate` templates
nested 1,500 deep (RecursionError) or rendering a prompt of terabytes (MemoryError), project
YAML with tags, dates or deep nesting (TypeError, RecursionError), a bad `base_url`, a name
ending in a newline and `config: {}`. Each is replayed over real uvicorn; the model is never
asked, and the server stays up.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx
import pytest
from tests.security.conftest import CHAT, Farm

BAD_URLS = ["http://127.0.0.1:99999/mcp", "http://[::1/mcp", "http://:47415:1/mcp"]
HUGE = 10**400


def mcp_bodies(url: str) -> dict[str, dict[str, Any]]:
    """A body naming an MCP server at `url`, in every dialect that takes one."""
    server = {"name": "x", "url": url}
    return {
        "/v1/chat/completions": {**CHAT, "mcp_servers": [server]},
        "/api/chat": {**CHAT, "stream": False, "mcp_servers": [server]},
        "/api/tools/search": {"pattern": "*", "mcp_servers": [server]},
        "/v1/messages": {
            **CHAT,
            "max_tokens": 16,
            "mcp_servers": [{"type": "url", "url": url, "name": "x"}],
        },
        "/v1/responses": {
            "model": "farm",
            "input": "hi",
            "tools": [{"type": "mcp", "server_label": "x", "server_url": url}],
        },
        "/v1/projects/default": {
            "name": "p",
            "config": {"mcp": {"servers": [{"name": "x", "transport": "http", "base_url": url}]}},
        },
    }


def post(farm: Farm, path: str, body: Any) -> httpx.Response:
    # Sent as text: json.dumps writes a 400-digit integer as it is.
    text = json.dumps(body)
    return httpx.post(
        farm.url + path, content=text, headers={"content-type": "application/json"}, timeout=60
    )


def message_of(reply: httpx.Response) -> str:
    error = reply.json()["error"]
    return error if isinstance(error, str) else error["message"]


@pytest.mark.parametrize("url", BAD_URLS)
@pytest.mark.parametrize("path", list(mcp_bodies("u")))
def test_a_bad_mcp_url_is_a_400(
    farm: Farm, path: str, url: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO):
        reply = post(farm, path, mcp_bodies(url)[path])
    assert reply.status_code == 400, reply.text
    assert "not a valid URL" in message_of(reply) or "names no host" in message_of(reply)
    assert farm.model.turns == []
    assert "Traceback" not in caplog.text


@pytest.mark.parametrize(
    ("path", "body", "param"),
    [
        ("/v1/chat/completions", {**CHAT, "tool_timeout": HUGE}, "tool_timeout"),
        ("/api/chat", {**CHAT, "tool_timeout": HUGE}, "tool_timeout"),
        ("/api/chat", {**CHAT, "keep_alive": HUGE}, "keep_alive"),
        ("/api/generate", {"model": "farm", "prompt": "hi", "keep_alive": HUGE}, "keep_alive"),
        ("/api/generate", {"model": "farm", "prompt": "", "keep_alive": HUGE}, "keep_alive"),
        ("/api/chat", {**CHAT, "options": {"seed": HUGE}}, "seed"),
        ("/v1/chat/completions", {**CHAT, "temperature": HUGE}, "temperature"),
    ],
)
def test_a_400_digit_integer_is_a_400(farm: Farm, path: str, body: Any, param: str) -> None:
    reply = post(farm, path, body)
    assert reply.status_code == 400, reply.text
    assert param in message_of(reply)
    assert farm.model.turns == []


def test_a_template_nested_1500_deep_is_a_400(farm: Farm) -> None:
    template = "{{ if .Prompt }}" * 1500 + "{{ .Prompt }}" + "{{ end }}" * 1500
    body = {"model": "farm", "prompt": "hi", "template": template, "stream": False}
    reply = post(farm, "/api/generate", body)
    assert reply.status_code == 400, reply.text
    assert "server.max_template_depth" in message_of(reply)


def test_a_template_that_would_render_terabytes_is_a_400(farm: Farm) -> None:
    # 1 MB of prompt used 500,000 times: 500 GB, from a 6.5 MB body.
    template = "{{.Prompt}}" * 500_000
    body = {"model": "farm", "prompt": "x" * 1_000_000, "template": template, "stream": False}
    reply = post(farm, "/api/generate", body)
    assert reply.status_code == 400, reply.text
    assert "server.max_template_chars" in message_of(reply)
    assert httpx.get(farm.url + "/health").status_code == 200


TAGGED = {
    "binary": "rag:\n  key: !!binary aGVsbG8=\n",
    "set": "rag: !!set {a, b}\n",
    "python": "rag: !!python/name:os.system\n",
}


@pytest.mark.parametrize("kind", TAGGED)
def test_a_yaml_tag_in_a_clients_config_is_a_400(farm: Farm, kind: str) -> None:
    reply = post(farm, "/v1/projects/default", {"name": "p", "config": TAGGED[kind]})
    assert reply.status_code == 400, reply.text
    assert "YAML tag" in message_of(reply)


def test_dates_tags_and_sets_in_a_project_file_can_be_listed_shown_and_deleted(
    farm: Farm,
) -> None:
    dated = {"name": "dated", "config": "rag:\n  2024-01-01: 2025-02-03\n"}
    written = post(farm, "/v1/projects/default", dated)
    assert written.status_code == 200, written.text
    assert written.json()["project"]["config"]["rag"] == {"2024-01-01": "2025-02-03"}
    folder = farm.home / "projects" / "default" / "odd"
    folder.mkdir(parents=True)
    (folder / "farmhand.yaml").write_text(
        "rag:\n  blob: !!binary aGVsbG8=\n  kinds: !!set {a, b}\n  2024-01-01: x\n"
    )
    listed = httpx.get(farm.url + "/v1/projects/default")
    assert listed.status_code == 200, listed.text
    assert {p["name"] for p in listed.json()["projects"]} == {"dated", "odd"}
    for method in ("GET", "DELETE"):
        for name in ("dated", "odd"):
            reply = httpx.request(method, f"{farm.url}/v1/projects/default/{name}")
            assert reply.status_code == 200, (method, name, reply.text)


@pytest.mark.parametrize("levels", [900, 3000])
def test_yaml_nested_deep_is_a_400(farm: Farm, levels: int) -> None:
    text = "rag: " + "[" * levels + "]" * levels + "\n"
    reply = post(farm, "/v1/projects/default", {"name": "p", "config": text})
    assert reply.status_code == 400, reply.text
    assert "server.max_config_depth" in message_of(reply)
    # A hand-written file as deep is an error on get and is left out of the list.
    folder = farm.home / "projects" / "default" / "deep"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "farmhand.yaml").write_text(text)
    assert httpx.get(farm.url + "/v1/projects/default/deep").status_code == 400
    assert httpx.get(farm.url + "/v1/projects/default").status_code == 200
    assert httpx.delete(farm.url + "/v1/projects/default/deep").status_code == 200


@pytest.mark.parametrize("url", ["ftp://host/v1", "http://[::1/v1", "http://h:99999/v1", "/v1"])
def test_a_bad_base_url_is_a_400_when_written(farm: Farm, url: str) -> None:
    model = {"name": "m", "provider": "openai", "model": "x", "base_url": url}
    config = {"runtime": {"models": [model]}}
    reply = post(farm, "/v1/projects/default", {"name": "p", "config": config})
    assert reply.status_code == 400, reply.text
    assert "base_url" in message_of(reply)


def test_a_name_ending_in_a_newline_is_a_400(farm: Farm) -> None:
    reply = post(farm, "/v1/projects/default", {"name": "p\n"})
    assert reply.status_code == 400, reply.text
    assert not (farm.home / "projects" / "default" / "p\n").exists()
    assert httpx.get(farm.url + "/v1/projects/default%0A").status_code == 400


@pytest.mark.parametrize("config", [{}, "{}", "{version: v1}"])
def test_an_empty_or_flow_style_config_is_taken(farm: Farm, config: Any) -> None:
    reply = post(farm, "/v1/projects/default", {"name": "p", "config": config})
    assert reply.status_code == 200, reply.text
    assert reply.json()["project"]["config"]["name"] == "p"
