"""Loading files: line numbers, key paths, env expansion, and the LlamaFarm docs' examples."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest
from tests.support.corpus import CORPORA

from farmhand.config import (
    CONFIG_FILENAME,
    FarmhandConfig,
    default_config,
    find_config,
    load_config,
    parse_config,
)
from farmhand.errors import ConfigError

# The yaml blocks of LlamaFarm's "Tool Calling" page, with their headings (see its NOTICE).
SEED = CORPORA / "llamafarm" / "tool-calling.md"
SEED_ENV = {
    "COMPANY_API_KEY": "company-secret-0001",
    "API_TOKEN": "tok",
    "API_KEY": "key",
    "API_BASE_URL": "https://api.example.com/mcp",
    "GITHUB_TOKEN": "gh",
    "SLACK_TOKEN": "sl",
}


def seed_blocks() -> list[tuple[str, str]]:
    """Every ```yaml block of the tool-calling doc, with the heading it sits under."""
    heading, blocks = "", []
    pattern = re.compile(r"^(#{1,4} [^\n]*)$|^```yaml\n(.*?)^```$", re.M | re.S)
    for match in pattern.finditer(SEED.read_text(encoding="utf-8")):
        if match.group(1):
            heading = match.group(1).lstrip("# ")
        else:
            blocks.append((heading, match.group(2)))
    return blocks


BLOCKS = seed_blocks()
# Blocks that are pieces of a file rather than a file: a list item, a bare schema, and a
# model that names a server defined in the block before it.
FRAGMENTS = {1, 3, 11}


def write(directory: Path, text: str, name: str = CONFIG_FILENAME) -> Path:
    path = directory / name
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def problems(tmp_path: Path, text: str, env: dict[str, str] | None = None) -> list[str]:
    """The lines of the error for `text`, with the file name shortened to F."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path, environ=env or {})
    return str(info.value).replace(str(path), "F").splitlines()


# -- the LlamaFarm document ------------------------------------------------------------------


def test_the_document_has_the_blocks_we_expect() -> None:
    assert len(BLOCKS) == 19
    assert BLOCKS[13][0] == "Complete Configuration Example"
    assert [BLOCKS[i][0] for i in sorted(FRAGMENTS)] == [
        "2. Assign It to a Model",
        "STDIO (Local Process)",
        "Parameters Schema",
    ]


def test_complete_configuration_example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (text,) = [t for h, t in BLOCKS if h == "Complete Configuration Example"]
    monkeypatch.setenv("COMPANY_API_KEY", "sk-live-0123456789")
    path = tmp_path / "llamafarm.yaml"
    path.write_text(text, encoding="utf-8")

    config = load_config(find_config(path))

    assert config.source == path
    assert (config.version, config.name, config.namespace) == ("v1", "my-project", "default")
    assert [(s.name, s.transport) for s in config.mcp.servers] == [
        ("filesystem", "stdio"),
        ("database", "stdio"),
        ("company-api", "http"),
        ("llamafarm", "http"),
    ]
    fs = config.mcp.servers[0]
    assert (fs.command, fs.args) == (
        "npx",
        ["-y", "@modelcontextprotocol/server-filesystem", "/Users/myuser/projects"],
    )
    assert config.mcp.servers[2].headers == {"Authorization": "Bearer sk-live-0123456789"}
    assert config.mcp.servers[3].base_url == "http://localhost:14345/mcp"
    assert config.runtime.default_model == "assistant"
    assert config.model().name == "assistant"
    assert [(m.name, m.provider, m.model) for m in config.runtime.models] == [
        ("assistant", "openai", "gpt-4"),
        ("public-chat", "ollama", "llama3.1:8b"),
        ("automation", "openai", "gpt-4"),
    ]
    served = {m.name: [s.name for s in config.servers_for(m)] for m in config.runtime.models}
    assert served == {
        "assistant": ["filesystem", "database", "company-api"],
        "public-chat": [],
        "automation": ["llamafarm", "database"],
    }
    assert config.system_prompt(config.model("public-chat")) == (
        "You are a helpful assistant with access to various tools.\n"
        "Use the available tools to help answer questions and complete tasks."
    )


def test_complete_example_without_its_variable_names_the_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (text,) = [t for h, t in BLOCKS if h == "Complete Configuration Example"]
    monkeypatch.delenv("COMPANY_API_KEY", raising=False)
    path = tmp_path / "llamafarm.yaml"
    path.write_text(text, encoding="utf-8")
    line = text.splitlines().index("        Authorization: Bearer ${env:COMPANY_API_KEY}") + 1
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == (
        f"{path}:{line}: mcp.servers[2].headers.Authorization: environment variable"
        " COMPANY_API_KEY is not set; export COMPANY_API_KEY=... or give a default:"
        " ${env:COMPANY_API_KEY:-value}"
    )


@pytest.mark.parametrize(
    "index", [i for i in range(len(BLOCKS)) if i not in FRAGMENTS], ids=lambda i: BLOCKS[i][0]
)
def test_every_complete_snippet_of_the_document_loads(index: int) -> None:
    config = parse_config(BLOCKS[index][1], BLOCKS[index][0], environ=SEED_ENV)
    assert config.mcp.servers or config.runtime.models


def test_document_fragments_load_once_put_in_place() -> None:
    # "Assign it to a model" refers to the server of "Add an MCP server".
    both = parse_config(BLOCKS[0][1] + BLOCKS[1][1])
    assert [s.name for s in both.servers_for(both.model("assistant"))] == ["filesystem"]
    with pytest.raises(ConfigError) as info:
        parse_config(BLOCKS[1][1], "assign.yaml")
    assert str(info.value) == (
        "assign.yaml:7: runtime.models[0].mcp_servers[0]: unknown MCP server 'filesystem';"
        " mcp.servers is empty; define it there or drop this reference"
    )
    # The "common STDIO servers" list is a list of mcp.servers entries.
    servers = parse_config("mcp:\n  servers:\n" + textwrap.indent(BLOCKS[3][1], "    "))
    assert [s.name for s in servers.mcp.servers] == ["filesystem", "sqlite", "my-python-tool"]
    # The parameters schema is the parameters of an inline tool.
    tool = parse_config(
        "runtime:\n  models:\n    - name: m\n      tools:\n        - name: t\n"
        + textwrap.indent(BLOCKS[11][1], "          ")
    )
    assert tool.model().tool_definitions()[0].parameters["required"] == ["param1", "param2"]


def test_document_inline_tool_example() -> None:
    (text,) = [t for h, t in BLOCKS if h == "Configuration"]
    model = parse_config(text).model()
    assert (model.provider, model.model) == ("universal", "Qwen/Qwen2.5-7B-Instruct")
    (tool,) = model.tool_definitions()
    assert tool.name == "cli.dataset_upload"
    assert tool.parameters["required"] == ["filepath", "namespace", "project", "dataset"]


# -- finding and reading files ---------------------------------------------------------------


def test_find_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert find_config(None) is None
    # A LlamaFarm project: its llamafarm.yaml is the config when no farmhand.yaml is there.
    other = write(tmp_path, "name: other\n", "llamafarm.yaml")
    assert find_config(None) == Path("llamafarm.yaml")
    write(tmp_path, "name: here\n")
    assert find_config(None) == Path(CONFIG_FILENAME)
    assert find_config(other) == other
    sub = tmp_path / "project"
    sub.mkdir()
    lf = write(sub, "name: lf\n", "llamafarm.yaml")
    assert find_config(sub) == lf


def test_missing_explicit_file_is_an_error(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    with pytest.raises(ConfigError) as info:
        find_config(missing)
    assert str(info.value) == (
        f"config file {missing} does not exist; check the path, or leave out --config"
        " to use ./farmhand.yaml, ./llamafarm.yaml or the built-in default"
    )
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(missing)
    with pytest.raises(ConfigError) as info:
        find_config(tmp_path)
    assert str(info.value) == (
        f"{tmp_path} is a directory without farmhand.yaml or llamafarm.yaml;"
        " pass the config file itself"
    )


def test_no_file_means_the_default() -> None:
    assert load_config(None) == default_config()


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n"])
def test_empty_file_is_all_defaults(tmp_path: Path, text: str) -> None:
    config = load_config(write(tmp_path, text))
    assert config.model_dump() == FarmhandConfig().model_dump()
    assert config.model().name == "default"


def test_undecodable_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_bytes(b"name: \xff\xfe\n")
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value) == f"{path}: not UTF-8 text; save the config as UTF-8"


# -- values ----------------------------------------------------------------------------------


def test_env_expansion_everywhere(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        name: ${env:PROJECT}
        mcp:
          servers:
            - name: api
              transport: http
              base_url: https://${env:HOST}:${env:PORT:-443}/mcp
              headers: {Authorization: "Bearer ${env:TOKEN}"}
              tool_timeout: ${env:TIMEOUT}
            - name: local
              command: ${env:HOME_BIN}/server
              args: ["--db", "${env:DB:-./app.db}"]
              env: {KEY: "${env:TOKEN}"}
        runtime:
          max_tool_rounds: ${env:ROUNDS}
          models:
            - name: m
              provider: openai
              model: ${env:MODEL}
              api_key: ${env:TOKEN}
        """,
    )
    env = {
        "PROJECT": "demo",
        "HOST": "h.example",
        "TOKEN": "t0k",
        "TIMEOUT": "12.5",
        "HOME_BIN": "/opt",
        "ROUNDS": "3",
        "MODEL": "gpt-4o",
    }
    config = load_config(path, environ=env)
    api, local = config.mcp.servers
    assert config.name == "demo"
    assert api.base_url == "https://h.example:443/mcp"
    assert api.headers == {"Authorization": "Bearer t0k"}
    assert api.tool_timeout == 12.5
    assert (local.command, local.args, local.env) == (
        "/opt/server",
        ["--db", "./app.db"],
        {"KEY": "t0k"},
    )
    assert config.runtime.max_tool_rounds == 3
    assert (config.model().model, config.model().api_key) == ("gpt-4o", "t0k")


def test_yaml_keys_are_not_expanded_and_numbers_become_text(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        mcp:
          servers:
            - name: s
              command: srv
              args: [--port, 8080, 1.5]
              env: {"${env:X}": literal, PORT: 9000}
        """,
    )
    (s,) = load_config(path, environ={}).mcp.servers
    assert s.args == ["--port", "8080", "1.5"]
    assert s.env == {"${env:X}": "literal", "PORT": "9000"}


def test_anchors_and_merge_keys(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        x-base: &base
          transport: http
          base_url: https://one/mcp
        """,
    )
    # Unknown top-level keys are errors, so anchors must live inside a known section.
    assert problems(tmp_path, path.read_text())[0].startswith("F:1: x-base: unknown key")
    config = parse_config(
        textwrap.dedent(
            """
            mcp:
              servers:
                - &one
                  name: one
                  transport: http
                  base_url: https://one/mcp
                - <<: *one
                  name: two
                  base_url: https://two/mcp
            """
        )
    )
    assert [(s.name, s.transport, s.base_url) for s in config.mcp.servers] == [
        ("one", "http", "https://one/mcp"),
        ("two", "http", "https://two/mcp"),
    ]


def test_an_aliased_mapping_with_a_merge_can_be_reused(tmp_path: Path) -> None:
    config = parse_config(
        textwrap.dedent(
            """
            mcp:
              servers:
                - name: s
                  command: srv
                  env: &env
                    <<: {A: "1", B: "2"}
                    B: "3"
                - name: t
                  command: srv
                  env: *env
            """
        )
    )
    assert [s.env for s in config.mcp.servers] == [{"A": "1", "B": "3"}] * 2


def test_a_self_referencing_alias_is_an_error_not_a_hang(tmp_path: Path) -> None:
    assert problems(tmp_path, "mcp:\n  servers: &s\n    - *s\n") == [
        # The anchor is on line 2; the follow-on type error is not reported twice.
        "F:2: mcp.servers[0]: this alias refers to itself; remove the loop",
    ]


def test_model_path_is_relative_to_the_config_file(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        runtime:
          models:
            - {name: rel, model_path: models/x.gguf}
            - {name: abs, model_path: /data/y.gguf}
        """,
    )
    config = load_config(path)
    assert config.model("rel").model_path == str(tmp_path / "models" / "x.gguf")
    assert config.model("abs").model_path == "/data/y.gguf"


def test_llamafarm_project_sections_load(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        """
        version: v1
        name: rag-project
        namespace: team
        runtime:
          models:
            - name: default
              provider: ollama
              model: llama3.1:8b
              base_url: http://localhost:11434/v1
              model_api_parameters: {temperature: 0.2, top_p: 0.9}
        prompts:
          - name: default
            messages:
              - {role: system, content: You answer from documents.}
        datasets:
          - {name: docs, database: main_database, data_processing_strategy: universal}
        rag:
          databases:
            - name: main_database
              type: ChromaStore
              config: {persist_directory: ./data/chroma_db}
        components: {}
        """,
    )
    config = load_config(path)
    assert config.model().model_api_parameters == {"temperature": 0.2, "top_p": 0.9}
    assert config.datasets == [
        {"name": "docs", "database": "main_database", "data_processing_strategy": "universal"}
    ]
    assert config.system_prompt(config.model()) == "You answer from documents."


# -- errors, with their lines and key paths --------------------------------------------------


def test_unknown_keys_at_every_depth(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        version: v1
        nmae: typo
        mcp:
          severs: []
          servers:
            - name: fs
              comand: npx
        runtime:
          models:
            - name: m
              tools:
                - name: t
                  parameter: {}
        prompts:
          - name: p
            messages:
              - role: system
                content: hi
                weight: 2
        """,
    ) == [
        "5 problems in F:",
        "F:2: nmae: unknown key 'nmae' (did you mean 'name'?); allowed keys: version, name,"
        " namespace, mcp, runtime, prompts, server, llama_server, rag, datasets, components,"
        " voice, agents, nodes, router",
        "F:4: mcp.severs: unknown key 'severs' (did you mean 'servers'?); allowed keys: servers",
        "F:7: mcp.servers[0].comand: unknown key 'comand' (did you mean 'command'?);"
        " allowed keys: name, transport, command, args, env, base_url, headers, auth, client_id,"
        " client_secret, scopes, callback_port, tool_timeout,"
        " allow_unsafe_command, require_approval, trust_when_named, description,"
        " capabilities",
        "F:13: runtime.models[0].tools[0].parameter: unknown key 'parameter' (did you mean"
        " 'parameters'?); allowed keys: type, name, description, parameters",
        "F:19: prompts[0].messages[0].weight: unknown key 'weight'; allowed keys: role, content",
    ]


def test_wrong_types(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        version: 1
        mcp:
          servers:
            - name: s
              command: x
              args: --verbose
              env: {DEBUG: true}
        runtime:
          max_tool_rounds: many
          tool_timeout: -1
          models:
            - name: m
              n_ctx: 4096.5
              default: maybe
              tools: {name: t}
        prompts: nothing
        """,
    ) == [
        "8 problems in F:",
        "F:6: mcp.servers[0].args: should be a list (got '--verbose')",
        "F:7: mcp.servers[0].env.DEBUG: should be text (got True); put it in quotes to make it"
        " text",
        "F:9: runtime.max_tool_rounds: should be a whole number (got 'many')",
        "F:10: runtime.tool_timeout: should be greater than 0 (got -1)",
        "F:13: runtime.models[0].n_ctx: should be a whole number (got 4096.5)",
        "F:14: runtime.models[0].default: should be true or false (got 'maybe')",
        "F:15: runtime.models[0].tools: should be a list (got a mapping)",
        "F:16: prompts: should be a list (got 'nothing')",
    ]


def test_empty_section_is_reported_not_crashed(tmp_path: Path) -> None:
    assert problems(tmp_path, "mcp:\nruntime:\n  models:\n") == [
        "2 problems in F:",
        "F:1: mcp: should be a mapping of keys (got nothing)",
        "F:3: runtime.models: should be a list (got nothing)",
    ]


def test_unset_variables_name_the_line_and_the_variable(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        mcp:
          servers:
            - name: api
              transport: http
              base_url: ${env:API_URL}
              headers:
                Authorization: Bearer ${env:API_TOKEN}
                X-Ids: ${env:A}-${env:B}
        runtime:
          tool_timeout: ${env:TIMEOUT}
        """,
        env={"B": "set"},
    ) == [
        "4 problems in F:",
        "F:5: mcp.servers[0].base_url: environment variable API_URL is not set;"
        " export API_URL=... or give a default: ${env:API_URL:-value}",
        "F:7: mcp.servers[0].headers.Authorization: environment variable API_TOKEN is not set;"
        " export API_TOKEN=... or give a default: ${env:API_TOKEN:-value}",
        "F:8: mcp.servers[0].headers.X-Ids: environment variable A is not set;"
        " export A=... or give a default: ${env:A:-value}",
        "F:10: runtime.tool_timeout: environment variable TIMEOUT is not set;"
        " export TIMEOUT=... or give a default: ${env:TIMEOUT:-value}",
    ]


def test_malformed_reference(tmp_path: Path) -> None:
    assert problems(tmp_path, "name: ${env:my-project}\n") == [
        "F:1: name: malformed reference '${env:my-project}';"
        " write ${env:NAME} or ${env:NAME:-default}"
    ]


def test_transport_requirements(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        mcp:
          servers:
            - name: a
              transport: tcp
              command: x
            - name: b
              args: [x]
            - name: c
              base_url: http://localhost:1/mcp
            - name: d
              transport: http
            - name: e
              transport: sse
              command: srv
            - name: f
              transport: http
              base_url: localhost:8080
        """,
    ) == [
        "6 problems in F:",
        "F:4: mcp.servers[0].transport: should be 'stdio', 'http' or 'sse' (got 'tcp')",
        "F:6: mcp.servers[1]: stdio server 'b' needs a command; add `command: <program>`",
        "F:8: mcp.servers[2]: stdio server 'c' needs a command; add `command: <program>`"
        " (or set transport: http to use base_url)",
        "F:10: mcp.servers[3]: http server 'd' needs a URL; add `base_url: https://host/mcp`",
        "F:12: mcp.servers[4]: sse server 'e' needs a URL; add `base_url: https://host/mcp`",
        "F:15: mcp.servers[5]: base_url 'localhost:8080' of server 'f' must start with"
        " http:// or https://",
    ]


def test_missing_required_keys(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        mcp:
          servers:
            - command: npx
        runtime:
          models:
            - provider: openai
              model: gpt-4
        prompts:
          - messages: []
        """,
    ) == [
        "3 problems in F:",
        "F:3: mcp.servers[0]: missing required key 'name'; add `name: ...`",
        "F:6: runtime.models[0]: missing required key 'name'; add `name: ...`",
        "F:9: prompts[0]: missing required key 'name'; add `name: ...`",
    ]


def test_model_rules(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        runtime:
          models:
            - name: a
              provider: openai
            - name: b
              provider: ollama
              model: llama3
              model_path: ./x.gguf
            - name: c
              provider: lmstudio
        """,
    ) == [
        "3 problems in F:",
        "F:3: runtime.models[0]: provider 'openai' needs a model id; add `model: <id>`",
        "F:5: runtime.models[1]: model_path is only for provider llamacpp; for provider"
        " 'ollama' name the model with `model:`",
        "F:10: runtime.models[2].provider: should be 'llamacpp', 'openai', 'ollama',"
        " 'anthropic' or 'universal' (got 'lmstudio')",
    ]


def test_duplicate_names_and_dangling_references(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        mcp:
          servers:
            - name: fs
              command: a
            - name: fs
              command: b
        runtime:
          default_model: gpt
          models:
            - name: m
              mcp_servers: [fs, github]
              prompts:
                - default
                - review
            - name: m
              default: true
            - name: n
              default: true
        prompts:
          - name: default
          - name: default
        """,
    ) == [
        "7 problems in F:",
        "F:5: mcp.servers[1].name: duplicate MCP server name 'fs' (also mcp.servers[0]);"
        " rename one",
        "F:8: runtime.default_model: unknown model 'gpt'; defined in runtime.models: m, n",
        "F:11: runtime.models[0].mcp_servers[1]: unknown MCP server 'github';"
        " defined in mcp.servers: fs",
        "F:14: runtime.models[0].prompts[1]: unknown prompt 'review'; defined in prompts: default",
        "F:15: runtime.models[1].name: duplicate model name 'm' (also runtime.models[0]);"
        " rename one",
        "F:18: runtime.models[2].default: model 'm' is already the default;"
        " set `default: true` on one only",
        "F:21: prompts[1].name: duplicate prompt name 'default' (also prompts[0]); rename one",
    ]


def test_inline_tool_errors_point_into_the_openai_form(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        runtime:
          models:
            - name: m
              tools:
                - type: function
                  function:
                    name: search
                    parameters:
                      type: object
                      properties:
                        q: {type: strng}
                - type: function
                  function:
                    name: other
                    strict: true
                - name: flat
                  parameters: {type: array}
        """,
    ) == [
        "3 problems in F:",
        "F:8: runtime.models[0].tools[0].function.parameters: not a valid JSON Schema at"
        " parameters.properties.q.type: 'strng' is not valid under any of the given schemas",
        "F:15: runtime.models[0].tools[1].function.strict: unknown key 'strict'; allowed keys:"
        " type, name, description, parameters",
        "F:17: runtime.models[0].tools[2].parameters: parameters must be a JSON Schema with"
        " `type: object` at the top",
    ]


def test_duplicate_tool_names(tmp_path: Path) -> None:
    assert problems(
        tmp_path,
        """
        runtime:
          models:
            - name: m
              tools:
                - name: t
                - name: t
        """,
    ) == [
        "F:6: runtime.models[0].tools[1].name: duplicate tool name 't'"
        " (also runtime.models[0].tools[0]); rename one"
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "mcp:\n  servers:\n    - name: a\n   command: x\n",
            "F:4: invalid YAML: while parsing a block mapping on line 2, expected <block end>,"
            " but found '<block mapping start>'; check the indentation and quoting",
        ),
        (
            "name: [unclosed\n",
            "F:2: invalid YAML: while parsing a flow sequence on line 1, expected ',' or ']',"
            " but got '<stream end>'; check the indentation and quoting",
        ),
        (
            "runtime:\n\tmodels: []\n",
            "F:2: invalid YAML: found character '\\t' that cannot start any token;"
            " indent with spaces, not tabs",
        ),
        (
            "name: a\n---\nname: b\n",
            "F:2: invalid YAML: expected a single document in the stream on line 1, but found"
            " another document; check the indentation and quoting",
        ),
    ],
)
def test_yaml_syntax_errors(tmp_path: Path, text: str, expected: str) -> None:
    assert problems(tmp_path, text) == [expected]


def test_yaml_structure_errors(tmp_path: Path) -> None:
    assert problems(tmp_path, "- name: a\n") == [
        "F:1: the file must be a mapping of keys (version, mcp, runtime, prompts, ...),"
        " not a single value or a list"
    ]
    assert problems(
        tmp_path,
        """
        name: a
        runtime:
          max_tool_rounds: 3
          max_tool_rounds: 4
        name: b
        ? [complex, key]
        : 1
        version: !custom v2
        """,
    ) == [
        "4 problems in F:",
        "F:4: runtime.max_tool_rounds: duplicate key 'max_tool_rounds' (first on line 3)",
        "F:5: name: duplicate key 'name' (first on line 1)",
        "F:6: keys must be plain text, not lists or mappings",
        "F:8: version: could not determine a constructor for the tag '!custom';"
        " remove the tag or quote the value",
    ]


def test_errors_without_a_file_use_the_source_name() -> None:
    with pytest.raises(ConfigError) as info:
        parse_config("bogus: 1\n", "request body")
    assert str(info.value).startswith("request body:1: bogus: unknown key 'bogus'")
