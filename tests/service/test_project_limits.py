"""A project's chats run under the operator's bounds: its `server:` section and its
`runtime.saved_results` (the disk is the operator's), whatever the project says."""

from __future__ import annotations

from pathlib import Path

from farmhand.config import parse_config
from farmhand.service.projects import API_MARKER, Project, state_for
from farmhand.service.state import ServiceState
from farmhand.toolsets.mcp.pool import MCPPool


def test_a_project_cannot_loosen_the_operators_bounds(tmp_path: Path) -> None:
    operator = parse_config(
        "server:\n  limits:\n    max_item_references: 5\n"
        "runtime:\n  saved_results:\n    max_bytes: 1000\n"
    )
    text = (
        f"{API_MARKER}\nserver:\n  limits:\n    max_item_references: 100000\n"
        "runtime:\n  max_tool_rounds: 3\n  saved_results:\n    max_bytes: 1099511627776\n"
    )
    project = Project("default", "p", tmp_path / "p.yaml", text, parse_config(text))
    state = ServiceState(config=operator, home=tmp_path, pool=MCPPool())
    chats = state_for(state, project).config
    assert chats.server.limits.max_item_references == 5
    assert chats.runtime.saved_results.max_bytes == 1000
    assert chats.runtime.max_tool_rounds == 3  # the rest of its runtime is its own
    state.task_store().close()
