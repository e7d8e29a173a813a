"""`${env:VAR}` expansion and secret masking."""

from __future__ import annotations

import pytest

from farmhand.config.env import expand_env, is_secret_name, mask_secrets, mask_value
from farmhand.errors import ConfigError

ENV = {"TOKEN": "abc123", "HOST": "example.com", "EMPTY": "", "PORT": "8080"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("${env:TOKEN}", "abc123"),
        ("Bearer ${env:TOKEN}", "Bearer abc123"),
        ("https://${env:HOST}:${env:PORT}/mcp", "https://example.com:8080/mcp"),
        ("${env:MISSING:-fallback}", "fallback"),
        ("${env:MISSING:-}", ""),
        ("${env:EMPTY:-used when empty}", "used when empty"),
        ("${env:EMPTY}", ""),
        ("${env:TOKEN:-ignored}", "abc123"),
        ("no references", "no references"),
        ("$HOME and ${HOME} are not ours", "$HOME and ${HOME} are not ours"),
    ],
)
def test_expand(text: str, expected: str) -> None:
    assert expand_env(text, ENV) == expected


def test_substituted_values_are_not_expanded_again() -> None:
    assert expand_env("${env:A}", {"A": "${env:B}", "B": "no"}) == "${env:B}"


def test_defaults_to_the_process_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FARMHAND_TEST_VAR", "from os")
    assert expand_env("x ${env:FARMHAND_TEST_VAR}") == "x from os"


def test_unset_variable_names_it_and_says_how_to_fix() -> None:
    with pytest.raises(ConfigError) as info:
        expand_env("Bearer ${env:API_TOKEN}", ENV)
    assert str(info.value) == (
        "environment variable API_TOKEN is not set; export API_TOKEN=... "
        "or give a default: ${env:API_TOKEN:-value}"
    )


def test_several_unset_variables_are_all_named_once() -> None:
    with pytest.raises(ConfigError) as info:
        expand_env("${env:A}/${env:B}/${env:A}", {})
    assert str(info.value) == "environment variables A, B are not set; export A=... B=..."


@pytest.mark.parametrize(
    ("text", "bad"),
    [
        ("${env:}", "${env:}"),
        ("${env:1ABC}", "${env:1ABC}"),
        ("x ${env: TOKEN} y", "${env: TOKEN}"),
        ("${env:TOKEN", "${env:TOKEN"),
        ("ok ${env:TOKEN} then ${env:BAD-NAME}", "${env:BAD-NAME}"),
    ],
)
def test_malformed_references_are_errors(text: str, bad: str) -> None:
    with pytest.raises(ConfigError) as info:
        expand_env(text, ENV)
    assert str(info.value) == (
        f"malformed reference {bad!r}; write ${{env:NAME}} or ${{env:NAME:-default}}"
    )


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "API_KEY",
        "COMPANY_API_KEY",
        "X-API-Key",
        "apiKey",
        "APIKey",
        "Authorization",
        "Proxy-Authorization",
        "GITHUB_TOKEN",
        "access_token",
        "DB_PASSWORD",
        "client_secret",
        "AWS_SECRET_ACCESS_KEY",
        "Cookie",
        "X-Auth",
    ],
)
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize(
    "name",
    ["max_tokens", "tokenizer", "NODE_ENV", "Content-Type", "author", "X-Custom-Header", "PATH"],
)
def test_plain_names(name: str) -> None:
    assert not is_secret_name(name)


@pytest.mark.parametrize(
    ("value", "masked"),
    [
        ("", ""),
        ("short", "****"),
        ("exactly15chars!", "****"),
        ("sk-0123456789abcdef", "****cdef"),
        ("Bearer sk-0123456789abcdef", "Bearer ****cdef"),
        ("Bearer abc", "Bearer ****"),
        ("Basic dXNlcjpwYXNzd29yZA==", "Basic ****ZA=="),
    ],
)
def test_mask_value(value: str, masked: str) -> None:
    assert mask_value(value) == masked


def test_mask_secrets_walks_nested_data_and_leaves_the_rest() -> None:
    data = {
        "name": "demo",
        "api_key": "sk-0123456789abcdef",
        "max_tokens": 256,
        "headers": {"Authorization": "Bearer tok", "X-Custom-Header": "my-value"},
        "env": {"GITHUB_TOKEN": "ghp_0123456789abcdefXYZW", "NODE_ENV": "production"},
        "base_url": "https://user:hunter2@host.example/mcp",
        "tokens": ["a", "b"],
        "secrets": ["one", "two"],
        "nested": [{"password": "pw"}],
    }
    assert mask_secrets(data) == {
        "name": "demo",
        "api_key": "****cdef",
        "max_tokens": 256,
        "headers": {"Authorization": "Bearer ****", "X-Custom-Header": "my-value"},
        "env": {"GITHUB_TOKEN": "****XYZW", "NODE_ENV": "production"},
        "base_url": "https://user:****@host.example/mcp",
        "tokens": ["a", "b"],
        "secrets": ["****", "****"],
        "nested": [{"password": "****"}],
    }
    assert data["api_key"] == "sk-0123456789abcdef"  # the input is left alone
