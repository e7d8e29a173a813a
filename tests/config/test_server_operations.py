"""`server.drain_timeout` and `server.log_format`: defaults, read from the config, and a
clear error naming the key for a value out of range."""

from __future__ import annotations

import pytest

from farmhand.config import parse_config
from farmhand.errors import ConfigError


def test_defaults() -> None:
    server = parse_config("version: v1\n").server
    assert (server.drain_timeout, server.log_format) == (30.0, "text")


def test_read_from_the_config() -> None:
    server = parse_config("server:\n  drain_timeout: 5.5\n  log_format: json\n").server
    assert (server.drain_timeout, server.log_format) == (5.5, "json")


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("server:\n  drain_timeout: 0\n", "farmhand.yaml:2: server.drain_timeout"),
        ("server:\n  drain_timeout: 7200\n", "farmhand.yaml:2: server.drain_timeout"),
        ("server:\n  drain_timeout: soon\n", "farmhand.yaml:2: server.drain_timeout"),
        ("server:\n  log_format: xml\n", "farmhand.yaml:2: server.log_format"),
    ],
)
def test_a_bad_value_names_its_key(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "farmhand.yaml")
    assert says in str(caught.value)
