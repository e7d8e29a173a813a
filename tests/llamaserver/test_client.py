"""LlamaServerClient and its settings: every failure is one message that says what to do."""

from __future__ import annotations

import httpx
import pytest
from tests.support.fake_llama_server import FakeLlamaServer

from farmhand.errors import ConfigError, LlamaServerError
from farmhand.llamaserver.client import LlamaServerClient
from farmhand.llamaserver.settings import LlamaServerSettings

pytestmark = pytest.mark.anyio


async def test_a_request_that_takes_too_long(silent_port: int) -> None:
    client = LlamaServerClient(
        LlamaServerSettings(url=f"http://127.0.0.1:{silent_port}", timeout_ms=150)
    )
    with pytest.raises(LlamaServerError) as caught:
        await client.post_json("/completion", {"prompt": "x"})
    assert str(caught.value) == (
        "Request timed out after 150ms. Try reducing max_tokens or check server load."
    )
    await client.aclose()


async def test_a_per_request_timeout_wins(silent_port: int) -> None:
    client = LlamaServerClient(LlamaServerSettings(url=f"http://127.0.0.1:{silent_port}"))
    with pytest.raises(LlamaServerError, match="after 100ms"):
        await client.get_json("/health", timeout_ms=100)
    await client.aclose()


async def test_an_answer_that_is_not_json() -> None:
    fake = FakeLlamaServer()
    client = LlamaServerClient(LlamaServerSettings(), transport=httpx.ASGITransport(app=fake.app))
    with pytest.raises(LlamaServerError, match=r"something other than JSON.*LLAMA_SERVER_URL"):
        await client.get_json("/metrics")
    await client.aclose()


async def test_an_endpoint_the_server_lacks() -> None:
    client = LlamaServerClient(
        LlamaServerSettings(), transport=httpx.ASGITransport(app=FakeLlamaServer().app)
    )
    with pytest.raises(LlamaServerError) as caught:
        await client.post_json("/infill", {})
    assert str(caught.value).startswith("llama-server has no endpoint POST /infill (Not Found)")
    await client.aclose()


def test_settings_from_the_environment() -> None:
    assert LlamaServerSettings.from_env({}) == LlamaServerSettings(
        url="http://127.0.0.1:8080", timeout_ms=30000, api_key=None
    )
    env = {
        "LLAMA_SERVER_URL": "http://gpu:9000/",
        "LLAMA_SERVER_TIMEOUT": "500",
        "LLAMA_API_KEY": "k",
    }
    settings = LlamaServerSettings.from_env(env)
    assert (settings.url, settings.timeout_ms, settings.api_key, settings.port) == (
        "http://gpu:9000", 500, "k", 9000,
    )  # fmt: skip
    assert settings.overridden(timeout_ms=7).timeout_ms == 7
    assert settings.overridden(url=None).url == "http://gpu:9000"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"LLAMA_SERVER_TIMEOUT": "soon"}, "LLAMA_SERVER_TIMEOUT='soon' is not a whole number"),
        ({"LLAMA_SERVER_TIMEOUT": "-5"}, "must be a positive number of milliseconds, not -5"),
        ({"LLAMA_SERVER_URL": "localhost:8080"}, "'localhost:8080' is not an http(s) URL"),
    ],
)
def test_bad_settings_say_which_and_how_to_fix(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        LlamaServerSettings.from_env(env)
    assert message in str(caught.value)
