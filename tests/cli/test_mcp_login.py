"""`farmhand mcp login` / `logout` and `farmhand tools servers`, as a user runs them, against
the OAuth-protected server of tests/support/oauth_vault.py. The login runs with
--no-browser (as over SSH): the test reads the printed URL and plays the browser."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import yaml
from tests.support.oauth_vault import Vault, allow, running_vault
from tests.support.real_servers import free_port

CLI = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def vault() -> Iterator[Vault]:
    with running_vault() as running:
        yield running


@pytest.fixture
def project(tmp_path: Path, vault: Vault) -> Path:
    server = {
        "name": "vault",
        "transport": "http",
        "base_url": vault.url,
        "auth": "oauth",
        "client_id": "farmhand-test",
        "client_secret": "s3cret-client-value",
        "callback_port": free_port(),
    }
    plain = {"name": "plain", "transport": "http", "base_url": vault.url}
    (tmp_path / "farmhand.yaml").write_text(yaml.safe_dump({"mcp": {"servers": [server, plain]}}))
    return tmp_path


def env(project: Path) -> dict[str, str]:
    return {"FARMHAND_HOME": str(project / "home")}


def run_login(project: Path, *extra: str) -> tuple[int, str, str]:
    """`farmhand mcp login vault --no-browser`, allowing the URL it prints."""
    process = subprocess.Popen(
        [sys.executable, "-m", "farmhand", "mcp", "login", "vault", "--no-browser", *extra],
        cwd=project,
        env={**os.environ, **env(project)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        if line.startswith("http"):
            allow(line.strip())
            break
    out, err = process.communicate(timeout=120)
    return process.returncode, out, "".join(lines) + err


def test_login_tools_servers_call_and_logout(
    project: Path, vault: Vault, farmhand_cli: CLI
) -> None:
    # The config's client, registered ahead with its fixed loopback redirect.
    server = yaml.safe_load((project / "farmhand.yaml").read_text())["mcp"]["servers"][0]
    redirect = f"http://127.0.0.1:{server['callback_port']}/callback"
    vault_register(vault, "farmhand-test", "s3cret-client-value", redirect)
    code, out, err = run_login(project)
    assert code == 0, err
    assert "Open this URL in a browser to sign in to vault" in err
    assert "signed in to vault: oauth: logged in, scopes tools" in out and "2 tools" in out

    listing = farmhand_cli("tools", "servers", cwd=project, env=env(project))
    assert listing.returncode == 0, listing.stderr
    assert "oauth: logged in, scopes tools, token valid" in listing.stdout
    assert "auth: none" in listing.stdout  # the plain entry

    called = farmhand_cli("tools", "call", "vault:whoami", cwd=project, env=env(project))
    assert called.returncode == 0 and "farmer (tools)" in called.stdout, called.stderr

    home_files = list((project / "home").rglob("*.json"))
    token = yaml.safe_load(home_files[0].read_text())["tokens"]["access_token"]
    for shown in (listing.stdout, called.stdout, called.stderr, out, err):
        assert token not in shown

    logged_out = farmhand_cli("mcp", "logout", "vault", cwd=project, env=env(project))
    assert "vault: logged out (revocation: revoked)" in logged_out.stdout, logged_out.stderr
    refused = httpx.post(vault.url, headers={"Authorization": f"Bearer {token}"}, json={})
    assert refused.status_code == 401
    after = farmhand_cli("tools", "servers", cwd=project, env=env(project))
    assert "oauth: login needed (farmhand mcp login vault)" in after.stdout


def test_config_show_masks_the_client_secret(project: Path, farmhand_cli: CLI) -> None:
    shown = farmhand_cli("config", "show", cwd=project, env=env(project))
    assert shown.returncode == 0, shown.stderr
    assert "s3cret-client-value" not in shown.stdout and "client_secret" in shown.stdout


def test_a_server_without_oauth_cannot_log_in(project: Path, farmhand_cli: CLI) -> None:
    run = farmhand_cli("mcp", "login", "plain", "--no-browser", cwd=project, env=env(project))
    assert run.returncode == 1 and "add `auth: oauth` to it" in run.stderr
    run = farmhand_cli("mcp", "login", "nope", cwd=project, env=env(project))
    assert run.returncode == 1 and "no MCP server named 'nope'" in run.stderr


def vault_register(vault: Vault, client_id: str, secret: str, redirect: str) -> None:
    """Register a client ahead of time, as an operator does on a provider's console."""
    client = {"client_id": client_id, "client_secret": secret, "redirect_uris": [redirect]}
    answer = httpx.post(f"{vault.issuer}/test/preregister", json=client)
    answer.raise_for_status()
