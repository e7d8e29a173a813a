"""Which models a request may name: the configured ones, or the default when none is."""

from __future__ import annotations

from pathlib import Path

import pytest

from farmhand.config.models import FarmhandConfig
from farmhand.errors import UnknownModelError
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.pool import MCPPool


def test_a_request_cannot_make_the_server_load_another_catalog_model(tmp_path: Path) -> None:
    state = ServiceState(config=FarmhandConfig(), home=tmp_path, pool=MCPPool())
    assert state.model_config(None).name == "default"
    assert state.model_config("default").name == "default"
    # The CLI may run any catalog model; over HTTP a stranger would make it load 1 GB more.
    with pytest.raises(UnknownModelError, match=r"available models: default$"):
        state.model_config("qwen2.5-coder:0.5b")
