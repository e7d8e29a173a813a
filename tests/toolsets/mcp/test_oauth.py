"""OAuth against a real protected MCP server on loopback (servers/oauth_server.py: the SDK's
authorization server routes and a resource server with bearer auth, two ports).

The browser is driven over HTTP: it opens the authorization URL (the server's user always
clicks "Allow"), and follows the redirect to farmhand's loopback callback, as a browser
would. Then: a tool call with the stored token, a token refreshed before and after it
expires, a revoked token, a call needing a wider scope, and the attacks a login must
survive (a redirect with a forged `state`, an `iss` from another server, tokens meant for
another URL).
"""

from __future__ import annotations

import json
import stat
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from tests.support.oauth_vault import Vault, browser, running_vault

from farmhand.config.models import McpServerConfig
from farmhand.errors import PolicyError, ToolServerError
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.oauth_login import LoginFailed, login
from farmhand.toolsets.mcp.oauth_store import TokenFile, token_path
from farmhand.toolsets.mcp.policy import RequestPolicy

pytestmark = pytest.mark.anyio

Show = Callable[[str], Awaitable[None]]


@pytest.fixture(scope="module")
def vault() -> Iterator[Vault]:
    with running_vault() as running:
        yield running


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("FARMHAND_HOME", str(tmp_path))
    return tmp_path


def vault_server(vault: Vault, **settings: Any) -> McpServerConfig:
    return McpServerConfig.model_validate(
        {"name": "vault", "transport": "http", "base_url": vault.url, "auth": "oauth", **settings}
    )


async def call(server: McpServerConfig, tool: str) -> tuple[str, bool]:
    async with MCPToolset.from_config(server, call_timeout=20) as toolset:
        output = await toolset.call_tool(tool, {})
        return output.text, output.is_error


def stored(home: Path) -> dict[str, Any]:
    found: dict[str, Any] = json.loads(token_path("vault", home).read_text())
    return found


async def test_login_then_a_tool_call_with_the_stored_token(vault: Vault, home: Path) -> None:
    server = vault_server(vault)
    seen: list[str] = []
    result = await login(server, browser(seen=seen), connect_timeout=20)
    assert result.asked and result.tools == 2
    assert result.state.logged_in and result.state.scope == "tools"
    query = parse_qs(urlsplit(seen[0]).query)
    assert query["code_challenge_method"] == ["S256"] and query["resource"] == [vault.url]
    path = token_path("vault", home)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert stored(home)["tokens"]["access_token"].startswith("at-")

    assert await call(server, "whoami") == ("farmer (tools)", False)


async def test_the_sse_transport_logs_in_and_calls_too(vault: Vault) -> None:
    server = McpServerConfig.model_validate(
        {"name": "vault", "transport": "sse", "base_url": vault.sse_url, "auth": "oauth"}
    )
    result = await login(server, browser(), connect_timeout=20)
    assert result.asked and result.tools == 2 and result.state.logged_in
    assert await call(server, "whoami") == ("farmer (tools)", False)


async def test_a_token_is_refreshed_before_it_expires_and_after(vault: Vault, home: Path) -> None:
    server = vault_server(vault)
    await login(server, browser(), connect_timeout=20)
    store = TokenFile("vault", vault.url, home)
    first = stored(home)["tokens"]["access_token"]
    before = vault.counts().get("refreshes", 0)

    # Thirty seconds left: within the margin, so the next connection refreshes first.
    store._update(expires_at=stored(home)["expires_at"] - 3600 + 30)
    assert await call(server, "whoami") == ("farmer (tools)", False)
    second = stored(home)["tokens"]["access_token"]
    assert second != first and vault.counts()["refreshes"] == before + 1

    # Expired on both sides (the server's clock too): refreshed, and the call goes through.
    vault.expire_all()
    store._update(expires_at=stored(home)["expires_at"] - 7200)
    assert await call(server, "whoami") == ("farmer (tools)", False)
    assert stored(home)["tokens"]["access_token"] not in (first, second)
    assert vault.counts()["refreshes"] == before + 2


async def test_a_revoked_token_is_a_clear_error_naming_the_login(vault: Vault, home: Path) -> None:
    server = vault_server(vault)
    await login(server, browser(), connect_timeout=20)
    data = stored(home)
    revoked = httpx.post(
        f"{vault.issuer}/revoke",
        data={
            "token": data["tokens"]["refresh_token"],
            "client_id": data["client_info"]["client_id"],
            "client_secret": data["client_info"]["client_secret"],
        },
    )
    assert revoked.status_code == 200
    with pytest.raises(ToolServerError, match="farmhand mcp login vault") as failed:
        await call(server, "whoami")
    assert "refused the stored OAuth token" in str(failed.value)
    assert not TokenFile("vault", vault.url, home).state().logged_in


async def test_a_running_session_takes_a_new_login_without_a_restart(
    vault: Vault, home: Path
) -> None:
    """As under `farmhand serve`: the pool's session outlives a revocation, tells each call
    to log in again, and uses the new login once `farmhand mcp login` has stored it."""
    server = vault_server(vault)
    await login(server, browser(), connect_timeout=20)
    async with MCPToolset.from_config(server, call_timeout=20) as toolset:
        assert (await toolset.call_tool("whoami", {})).text == "farmer (tools)"
        data = stored(home)
        secret = data["client_info"]["client_secret"]
        form = {"token": data["tokens"]["refresh_token"], "client_secret": secret}
        form["client_id"] = data["client_info"]["client_id"]
        assert httpx.post(f"{vault.issuer}/revoke", data=form).status_code == 200
        refused = await toolset.call_tool("whoami", {})
        assert refused.is_error and "run `farmhand mcp login vault`" in refused.text
        await login(server, browser(), connect_timeout=20)
        assert (await toolset.call_tool("whoami", {})).text == "farmer (tools)"


async def test_no_login_yet_fails_before_anything_is_sent(vault: Vault) -> None:
    before = vault.counts()
    with pytest.raises(ToolServerError, match="has no login yet: run `farmhand mcp login vault`"):
        await call(vault_server(vault), "whoami")
    assert vault.counts() == before  # nothing registered, nothing asked


async def test_a_call_needing_a_wider_scope_asks_for_a_login_that_grants_it(
    vault: Vault, home: Path
) -> None:
    server = vault_server(vault)
    await login(server, browser(), connect_timeout=20)
    text, is_error = await call(server, "audit_log")
    assert is_error and "needs a wider OAuth grant" in text and "admin" in text, text
    assert "farmhand mcp login vault" in text
    assert TokenFile("vault", vault.url, home).state().wanted_scope == "admin"

    seen: list[str] = []
    result = await login(server, browser(seen=seen), connect_timeout=20)
    assert "admin" in parse_qs(urlsplit(seen[0]).query)["scope"][0].split()
    assert set((result.state.scope or "").split()) == {"tools", "admin"}
    assert result.state.wanted_scope is None
    assert await call(server, "audit_log") == ("audit: 3 entries", False)


async def test_configured_scopes_are_asked_for(vault: Vault) -> None:
    result = await login(vault_server(vault, scopes=["admin"]), browser(), connect_timeout=20)
    assert set((result.state.scope or "").split()) == {"tools", "admin"}


async def test_a_refusal_at_the_authorization_server_is_told(vault: Vault, home: Path) -> None:
    def deny(params: dict[str, str]) -> None:
        params.pop("code")
        params |= {"error": "access_denied", "error_description": "the user said no\x1b[31m"}

    with pytest.raises(LoginFailed, match="refused the login to vault: the user said no"):
        await login(vault_server(vault), browser(deny), connect_timeout=20)
    assert not TokenFile("vault", vault.url, home).state().logged_in


async def test_a_redirect_without_the_logins_state_is_ignored(vault: Vault) -> None:
    """Another page on this machine cannot end a login by calling the loopback with a code
    or an error of its own: without the login's `state` (a forged one) it is refused, and
    the login goes on to the real redirect."""
    server = vault_server(vault)
    answers: list[int] = []

    async def meddle_then_allow(url: str) -> None:
        callback = urlsplit(url)  # the loopback's address is in redirect_uri
        redirect = parse_qs(callback.query)["redirect_uri"][0]
        async with httpx.AsyncClient() as http:
            for query in ("code=stolen&state=guess", "error=access_denied&state=guess"):
                answers.append((await http.get(f"{redirect}?{query}")).status_code)
        await browser()(url)

    result = await login(server, meddle_then_allow, connect_timeout=20)
    assert answers == [400, 400] and result.state.logged_in


async def test_an_iss_of_another_server_is_refused(vault: Vault, home: Path) -> None:
    """RFC 9207: a code sent back by another authorization server (a mix-up attack)."""

    def mix_up(params: dict[str, str]) -> None:
        params["iss"] = "http://127.0.0.1:1/"

    with pytest.raises(LoginFailed, match="iss mismatch"):
        await login(vault_server(vault), browser(mix_up), connect_timeout=20)
    assert not TokenFile("vault", vault.url, home).state().logged_in


async def test_tokens_are_never_sent_to_another_url(vault: Vault, home: Path) -> None:
    await login(vault_server(vault), browser(), connect_timeout=20)
    moved = TokenFile("vault", "https://elsewhere.example/mcp", home)
    assert await moved.get_tokens() is None and await moved.get_client_info() is None
    assert not moved.has_tokens()


def test_a_request_cannot_bring_a_server_with_oauth() -> None:
    """Else a request naming `vault` at its own URL could borrow the operator's login."""
    brought = McpServerConfig(
        name="vault", transport="http", base_url="https://evil.example/mcp", auth="oauth"
    )
    with pytest.raises(PolicyError, match="can only be set in the operator's config"):
        RequestPolicy().admit(brought)


async def test_a_server_asking_for_oauth_is_offered_it(vault: Vault) -> None:
    plain = McpServerConfig(name="vault", transport="http", base_url=vault.url)
    with pytest.raises(ToolServerError, match="add `auth: oauth` to server 'vault'") as failed:
        await call(plain, "whoami")
    assert "farmhand mcp login vault" in str(failed.value)


def test_oauth_settings_need_auth_oauth_on_a_url_server() -> None:
    with pytest.raises(ValueError, match="without `auth: oauth`"):
        McpServerConfig(name="x", transport="http", base_url="https://h/mcp", scopes=["a"])
    with pytest.raises(ValueError, match="cannot use `auth: oauth`"):
        McpServerConfig(name="x", command="srv", auth="oauth")
    with pytest.raises(ValueError, match="both `auth: oauth` and an Authorization header"):
        McpServerConfig(
            name="x",
            transport="http",
            base_url="https://h/mcp",
            auth="oauth",
            headers={"Authorization": "Bearer x"},
        )
