"""The bounds of `server.limits`, `server.mcp_sessions` and `runtime.saved_results`: a
default each, and a value out of range is an error naming its line and key."""

from __future__ import annotations

import pytest

from farmhand.config import parse_config
from farmhand.config.limits import LimitsConfig, McpSessionsConfig, SavedResultsConfig
from farmhand.errors import ConfigError


def test_every_bound_has_a_default() -> None:
    config = parse_config("version: v1\n")
    assert config.server.limits == LimitsConfig()
    assert config.server.limits.max_item_references == 100
    assert config.server.limits.max_search_pattern_chars == 256
    assert config.server.mcp_sessions == McpSessionsConfig()
    assert config.server.mcp_sessions.idle_timeout == 300
    assert config.runtime.saved_results == SavedResultsConfig()


def test_bounds_are_read_from_the_config() -> None:
    config = parse_config(
        "server:\n  limits:\n    max_search_wildcards: 4\n"
        "  mcp_sessions:\n    max_per_client: 2\n"
        "runtime:\n  saved_results:\n    max_age_days: 1.5\n"
    )
    assert config.server.limits.max_search_wildcards == 4
    assert config.server.mcp_sessions.max_per_client == 2
    assert config.runtime.saved_results.max_age_days == 1.5


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("server:\n  limits:\n    max_item_references: -1\n", "server.limits.max_item_references"),
        ("server:\n  mcp_sessions:\n    idle_timeout: 0\n", "server.mcp_sessions.idle_timeout"),
        ("server:\n  mcp_sessions:\n    max_total: " + "9" * 400 + "\n", "max_total"),
        ("runtime:\n  saved_results:\n    max_bytes: lots\n", "saved_results.max_bytes"),
        ("server:\n  limits:\n    max_patterns: 3\n", "max_patterns"),
    ],
)
def test_a_bound_out_of_range_names_its_key(text: str, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_config(text, "farmhand.yaml")
    assert says in str(caught.value)
    assert "farmhand.yaml:" in str(caught.value)
