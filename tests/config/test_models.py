"""The config models used directly from Python (the loader adds files and lines on top)."""

from __future__ import annotations

import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from farmhand.config import (
    DEFAULT_MODEL_NAME,
    FarmhandConfig,
    InlineToolConfig,
    McpConfig,
    McpServerConfig,
    ModelConfig,
    PromptConfig,
    PromptMessage,
    RuntimeConfig,
    default_config,
)
from farmhand.config.loader import load_config
from farmhand.config.models import format_path
from farmhand.config.server import ServerConfig
from farmhand.errors import ConfigError
from farmhand.tools.definition import ToolDefinition

ALL_MODELS: list[type[BaseModel]] = [
    FarmhandConfig,
    McpConfig,
    McpServerConfig,
    RuntimeConfig,
    ModelConfig,
    InlineToolConfig,
    PromptConfig,
    PromptMessage,
    ServerConfig,
]


@pytest.mark.parametrize("model", ALL_MODELS, ids=lambda m: m.__name__)
def test_every_model_forbids_unknown_keys_and_documents_every_field(
    model: type[BaseModel],
) -> None:
    assert model.model_config.get("extra") == "forbid"
    undocumented = [name for name, f in model.model_fields.items() if not f.description]
    assert undocumented == []


def server(**kw: Any) -> McpServerConfig:
    return McpServerConfig.model_validate({"name": "s", **kw})


def model(**kw: Any) -> ModelConfig:
    return ModelConfig.model_validate({"name": "m", **kw})


def test_format_path() -> None:
    assert format_path(("mcp", "servers", 0, "headers", "X-Key")) == "mcp.servers[0].headers.X-Key"
    assert format_path(()) == ""
    assert format_path(("prompts", 2)) == "prompts[2]"


def test_server_defaults_to_stdio() -> None:
    s = server(command="npx", args=["-y", 8080], env={"PORT": 8080})
    assert (s.transport, s.command, s.args, s.env) == (
        "stdio",
        "npx",
        ["-y", "8080"],
        {"PORT": "8080"},
    )
    assert s.headers == {} and s.base_url is None and s.tool_timeout is None


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({}, "stdio server 's' needs a command; add `command: <program>`"),
        (
            {"base_url": "http://x/mcp"},
            "stdio server 's' needs a command; add `command: <program>`"
            " (or set transport: http to use base_url)",
        ),
        ({"transport": "http"}, "http server 's' needs a URL; add `base_url: https://host/mcp`"),
        ({"transport": "sse", "command": "x"}, "sse server 's' needs a URL;"),
        (
            {"transport": "http", "base_url": "localhost:8080"},
            "base_url 'localhost:8080' of server 's' must start with http:// or https://",
        ),
        ({"transport": "tcp", "command": "x"}, "Input should be 'stdio', 'http' or 'sse'"),
        ({"command": "x", "tool_timeout": 0}, "greater than 0"),
    ],
)
def test_server_validation(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        server(**fields)
    assert message in str(info.value)


def test_http_and_sse_servers() -> None:
    http = server(transport="http", base_url="https://h/mcp", headers={"Authorization": "x"})
    sse = server(transport="sse", base_url="http://h/sse", tool_timeout="2.5")
    assert http.headers == {"Authorization": "x"}
    assert sse.tool_timeout == 2.5


def test_model_defaults_to_the_embedded_default() -> None:
    m = model()
    assert (m.provider, m.model, m.model_path) == ("llamacpp", DEFAULT_MODEL_NAME, None)
    assert m.tool_call_strategy == "native_api"
    assert m.mcp_servers is None and m.tools == [] and m.prompts == []


def test_embedded_is_an_alias_of_llamacpp() -> None:
    assert model(provider="embedded", model="x").provider == "llamacpp"


def test_llamacpp_model_path_keeps_model_unset() -> None:
    m = model(model_path="/models/x.gguf")
    assert (m.model, m.model_path) == (None, "/models/x.gguf")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"provider": "openai"}, "provider 'openai' needs a model id; add `model: <id>`"),
        (
            {"provider": "ollama", "model": "x", "model_path": "a.gguf"},
            "model_path is only for provider llamacpp; for provider 'ollama' name the model",
        ),
        ({"provider": "lmstudio"}, "Input should be 'llamacpp', 'openai', 'ollama',"),
        ({"tool_call_strategy": "xml"}, "Input should be 'native_api' or 'prompt_based'"),
        ({"n_ctx": 0}, "greater than or equal to 1"),
        ({"temperature": -1}, "greater than or equal to 0"),
        ({"mcp_servers": "fs"}, "Input should be a valid list"),
    ],
)
def test_model_validation(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        model(**fields)
    assert message in str(info.value)


UPLOAD = {
    "type": "object",
    "required": ["filepath"],
    "properties": {"filepath": {"type": "string", "description": "The path"}},
}


def test_inline_tools_flat_and_openai_forms_give_the_same_definition() -> None:
    flat = {"type": "function", "name": "cli.upload", "description": "Up", "parameters": UPLOAD}
    nested = {
        "type": "function",
        "function": {"name": "cli.upload", "description": "Up", "parameters": UPLOAD},
    }
    m = model(tools=[flat, nested, {"name": "ping"}])
    expected = ToolDefinition("cli.upload", "Up", UPLOAD)
    assert m.tool_definitions() == [
        expected,
        expected,
        ToolDefinition("ping", "", {"type": "object", "properties": {}}),
    ]
    assert m.tool_definitions()[0].to_openai()["function"]["name"] == "cli.upload"


@pytest.mark.parametrize(
    ("tool", "message"),
    [
        (
            {"name": "t", "parameters": {"type": "array"}},
            "parameters must be a JSON Schema with `type: object` at the top",
        ),
        (
            {"name": "t", "parameters": {"type": "object", "properties": {"a": {"type": "strng"}}}},
            "not a valid JSON Schema at parameters.properties.a.type:",
        ),
        ({"name": "t", "type": "retrieval"}, "Input should be 'function'"),
        ({"description": "no name"}, "Field required"),
        ({"name": "t", "strict": True}, "Extra inputs are not permitted"),
    ],
)
def test_inline_tool_validation(tool: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError) as info:
        InlineToolConfig.model_validate(tool)
    assert message in str(info.value)


def test_prompt_roles() -> None:
    p = PromptConfig.model_validate({"name": "p", "messages": [{"role": "user", "content": "hi"}]})
    assert p.messages[0].role == "user"
    with pytest.raises(ValidationError, match="Input should be 'system', 'user' or 'assistant'"):
        PromptMessage.model_validate({"role": "tool", "content": "x"})


def test_runtime_limits() -> None:
    r = RuntimeConfig()
    assert (r.max_tool_rounds, r.tool_timeout, r.default_model, r.models) == (10, 30.0, None, [])
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        RuntimeConfig(max_tool_rounds=0)
    with pytest.raises(ValidationError, match="greater than 0"):
        RuntimeConfig(tool_timeout=0)


def config(**data: Any) -> FarmhandConfig:
    return FarmhandConfig.model_validate(data)


SERVERS = {
    "servers": [
        {"name": "fs", "command": "npx"},
        {"name": "db", "command": "sqlite-mcp"},
        {"name": "web", "transport": "http", "base_url": "http://localhost:1/mcp"},
    ]
}


def test_empty_config_uses_the_embedded_default_model() -> None:
    c = FarmhandConfig()
    assert (c.version, c.name, c.namespace) == ("v1", None, "default")
    assert c.mcp.servers == [] and c.runtime.models == [] and c.prompts == []
    m = c.model()
    assert (m.name, m.provider, m.model) == ("default", "llamacpp", DEFAULT_MODEL_NAME)
    assert c.model("default") == m
    assert c.source is None


def test_default_config() -> None:
    c = default_config()
    assert c.mcp.servers == []
    assert [m.name for m in c.runtime.models] == ["default"]
    assert c.model().model == DEFAULT_MODEL_NAME


@pytest.mark.parametrize(
    ("runtime", "expected"),
    [
        ({"models": [{"name": "a"}, {"name": "b"}]}, "a"),
        ({"models": [{"name": "a"}, {"name": "b", "default": True}]}, "b"),
        ({"default_model": "c", "models": [{"name": "a", "default": True}, {"name": "c"}]}, "c"),
    ],
)
def test_model_without_a_name(runtime: dict[str, Any], expected: str) -> None:
    assert config(runtime=runtime).model().name == expected


def test_model_by_name_and_unknown_names() -> None:
    c = config(runtime={"models": [{"name": "a"}, {"name": "b"}]})
    assert c.model("b").name == "b"
    with pytest.raises(ConfigError) as info:
        c.model("zzz")
    assert str(info.value) == "unknown model 'zzz'; available models: a, b"
    with pytest.raises(ConfigError) as info:
        FarmhandConfig().model("gpt-4")
    assert str(info.value) == "unknown model 'gpt-4'; available models: default"
    with pytest.raises(ConfigError) as info:
        c.model("gpt-4", catalog=True)
    assert str(info.value) == (
        "unknown model 'gpt-4'; available models: a, b, qwen2.5-coder:0.5b, qwen2.5-coder:1.5b"
    )


def test_the_cli_may_name_a_catalog_model_and_a_request_may_not() -> None:
    c = config(runtime={"models": [{"name": "a"}]})
    model = c.model("qwen2.5-coder:1.5b", catalog=True)
    assert (model.name, model.provider, model.model) == (
        "qwen2.5-coder:1.5b", "llamacpp", "qwen2.5-coder:1.5b"
    )  # fmt: skip
    with pytest.raises(ConfigError, match=r"available models: a$"):
        c.model("qwen2.5-coder:1.5b")


def test_servers_for_applies_the_access_rule() -> None:
    c = config(
        mcp=SERVERS,
        runtime={
            "models": [
                {"name": "all"},
                {"name": "none", "mcp_servers": []},
                {"name": "some", "mcp_servers": ["web", "fs"]},
            ]
        },
    )
    names = {m.name: [s.name for s in c.servers_for(m)] for m in c.runtime.models}
    assert names == {"all": ["fs", "db", "web"], "none": [], "some": ["web", "fs"]}
    assert [s.name for s in c.servers_for(c.model())] == ["fs", "db", "web"]
    stranger = model(mcp_servers=["ghost"])
    with pytest.raises(ConfigError) as info:
        c.servers_for(stranger)
    assert str(info.value) == "model 'm' names unknown MCP server 'ghost'; defined: fs, db, web"


def test_system_prompt() -> None:
    prompts = [
        {
            "name": "default",
            "messages": [
                {"role": "system", "content": "You help.\n"},
                {"role": "user", "content": "not a system message"},
            ],
        },
        {"name": "terse", "messages": [{"role": "system", "content": "Be brief."}]},
        {"name": "code", "messages": [{"role": "system", "content": "Review code."}]},
    ]
    c = config(
        prompts=prompts,
        runtime={"models": [{"name": "a"}, {"name": "b", "prompts": ["terse", "code"]}]},
    )
    assert c.system_prompt(c.model("a")) == "You help."
    assert c.system_prompt(c.model("b")) == "Be brief.\n\nReview code."
    assert config().system_prompt(model()) is None
    only_user = config(
        prompts=[{"name": "default", "messages": [{"role": "user", "content": "x"}]}]
    )
    assert only_user.system_prompt(model()) is None


def test_reference_issues_point_at_the_offending_entry() -> None:
    c = FarmhandConfig.model_validate(
        {
            "mcp": {"servers": [{"name": "fs", "command": "a"}, {"name": "fs", "command": "b"}]},
            "prompts": [{"name": "p"}],
            "runtime": {
                "default_model": "nope",
                "models": [
                    {"name": "a", "default": True, "mcp_servers": ["fs", "db"], "prompts": ["q"]},
                    {"name": "a", "default": True, "tools": [{"name": "t"}, {"name": "t"}]},
                ],
            },
        },
        context={"defer_reference_checks": True},
    )
    assert [(format_path(i.path), i.message) for i in c.reference_issues()] == [
        (
            "mcp.servers[1].name",
            "duplicate MCP server name 'fs' (also mcp.servers[0]); rename one",
        ),
        (
            "runtime.models[1].name",
            "duplicate model name 'a' (also runtime.models[0]); rename one",
        ),
        ("runtime.default_model", "unknown model 'nope'; defined in runtime.models: a"),
        (
            "runtime.models[1].default",
            "model 'a' is already the default; set `default: true` on one only",
        ),
        (
            "runtime.models[0].mcp_servers[1]",
            "unknown MCP server 'db'; defined in mcp.servers: fs",
        ),
        ("runtime.models[0].prompts[0]", "unknown prompt 'q'; defined in prompts: p"),
        (
            "runtime.models[1].tools[1].name",
            "duplicate tool name 't' (also runtime.models[1].tools[0]); rename one",
        ),
    ]


def test_reference_checks_run_when_built_directly() -> None:
    with pytest.raises(ValidationError) as info:
        config(runtime={"models": [{"name": "a", "mcp_servers": ["fs"]}]})
    assert (
        "runtime.models[0].mcp_servers[0]: unknown MCP server 'fs'; mcp.servers is empty;"
        " define it there or drop this reference"
    ) in str(info.value)


def test_llamafarm_sections_are_accepted_and_ignored() -> None:
    c = config(
        rag={"databases": [{"name": "main"}]},
        datasets=[{"name": "d", "database": "main"}],
        components={},
        voice={"enabled": False},
        agents={},
        nodes={},
        router={},
    )
    assert c.rag == {"databases": [{"name": "main"}]}
    assert c.model().name == "default"


def test_model_fields_match_the_documented_layout() -> None:
    hints = typing.get_type_hints(ModelConfig)
    assert set(ModelConfig.model_fields) == {
        "name",
        "provider",
        "model",
        "model_path",
        "base_url",
        "deployments",
        "api_key",
        "tool_call_strategy",
        "tool_parser",
        "chat_template",
        "text_tool_calls",
        "constrained",
        "prefix_cache",
        "grounding",
        "mcp_servers",
        "tools",
        "prompts",
        "rag",
        "n_ctx",
        "n_parallel",
        "temperature",
        "max_tokens",
        "description",
        "default",
        "model_api_parameters",
    }
    assert hints["mcp_servers"] == list[str] | None
    assert hints["chat_template"] == str | None


def test_inline_tools_in_any_format_become_openai_shaped(tmp_path: Path) -> None:
    c = config(
        runtime={
            "models": [
                {
                    "name": "m",
                    "tools": [
                        {"name": "weather", "input_schema": {"type": "object"}},
                        {"toolSpec": {"name": "add", "inputSchema": {"json": {"type": "object"}}}},
                    ],
                }
            ]
        }
    )
    assert [t.definition().name for t in c.model("m").tools] == ["weather", "add"]


def test_inline_tools_load_from_a_file_next_to_the_config(tmp_path: Path) -> None:
    (tmp_path / "tools.yaml").write_text("- name: weather\n  input_schema: {type: object}\n")
    (tmp_path / "farmhand.yaml").write_text(
        "runtime:\n  models:\n    - name: m\n      tools: file://tools.yaml\n"
    )
    assert [t.name for t in load_config(tmp_path / "farmhand.yaml").model("m").tools] == ["weather"]
    (tmp_path / "farmhand.yaml").write_text(
        "runtime:\n  models:\n    - name: m\n      tools: file://missing.yaml\n"
    )
    with pytest.raises(
        ConfigError, match=r"farmhand.yaml:4: runtime.models\[0\].tools: .*not found"
    ):
        load_config(tmp_path / "farmhand.yaml")
