"""`farmhand serve` with an operator's MCP server behind OAuth (tests/support/oauth_vault.py):
with no login the client's error names the command to run; after `farmhand mcp login` (here
its function, with a browser that allows) the stored token is used for the model's calls,
and a call needing a wider scope tells the model (and so the client) which login grants it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import openai
import pytest
from tests.support.farms import Farm, start
from tests.support.live import scripted_config
from tests.support.oauth_vault import Vault, browser, running_vault

from farmhand.config.models import McpServerConfig
from farmhand.messages import ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step
from farmhand.toolsets.mcp.oauth_login import login


@pytest.fixture(scope="module")
def vault() -> Iterator[Vault]:
    with running_vault() as running:
        yield running


@pytest.fixture
def farm(tmp_path: Path, vault: Vault, monkeypatch: pytest.MonkeyPatch) -> Iterator[Farm]:
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path))
    server = McpServerConfig(name="vault", transport="http", base_url=vault.url, auth="oauth")
    live, relay = start(tmp_path, scripted_config(server))
    relay.script = ScriptedProvider()
    with live:
        yield Farm(live, relay.script)


def ask(farm: Farm) -> str:
    answer = farm.client.chat.completions.create(
        model="farm", messages=[{"role": "user", "content": "check the vault"}]
    )
    return answer.choices[0].message.content or ""


def test_no_login_is_an_error_naming_the_login_command(farm: Farm) -> None:
    with pytest.raises(openai.APIStatusError) as failed:
        ask(farm)
    assert failed.value.status_code == 502
    assert "run `farmhand mcp login vault`" in str(failed.value.body)


def test_the_stored_login_is_used_and_a_wider_scope_is_asked_for(farm: Farm, vault: Vault) -> None:
    server = McpServerConfig(name="vault", transport="http", base_url=vault.url, auth="oauth")
    anyio.run(lambda: login(server, browser(), connect_timeout=20))
    farm.script.add(
        Step.calls(ToolCall("vault:whoami", {})),
        Step.calls(ToolCall("vault:audit_log", {})),
        Step.text("done"),
    )
    assert ask(farm) == "done"
    whoami, audit = [m.content for m in farm.script.requests[-1].messages if m.role == "tool"]
    assert whoami == "farmer (tools)"
    assert "needs a wider OAuth grant" in str(audit) and "farmhand mcp login vault" in str(audit)
