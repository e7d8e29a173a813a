"""llama_start on `farmhand serve`'s /mcp starts a program with a path and flags a caller
chooses. Over HTTP it is held to the request policy: the model only inside
server.allowed_dirs, and no extra flags unless llama_server.allow_extra_args (some write
files). Refused before anything is spawned; `farmhand mcp llama` over stdio (the local user)
keeps its full freedom (tests/llamaserver, tests/e2e)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mcp import Client
from tests.support.live import LiveServer

from farmhand.assembly import create_app
from farmhand.config.loader import load_config

pytestmark = pytest.mark.anyio


async def start(tmp_path: Path, config: str, arguments: dict[str, object]) -> str:
    path = tmp_path / "farmhand.yaml"
    path.write_text(config)
    app = create_app(load_config(path), home=tmp_path, api_keys=())
    with LiveServer(app) as farmhand:
        async with Client(farmhand.url + "/mcp") as client:
            result = await client.call_tool("llama_start", arguments)
        assert app.state.farmhand.home == tmp_path
    assert result.is_error
    text: str = result.content[0].text  # type: ignore[union-attr]
    assert not (tmp_path / "logs").exists() or not any((tmp_path / "logs").iterdir())
    return text


async def test_a_model_outside_allowed_dirs_is_refused(tmp_path: Path) -> None:
    config = "llama_server:\n  url: http://127.0.0.1:9\n"
    text = await start(tmp_path, config, {"model": "/etc/passwd"})
    assert "server.allowed_dirs" in text


async def test_extra_flags_need_the_operators_switch(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    (models / "m.gguf").write_bytes(b"GGUF")
    config = f"server:\n  allowed_dirs: [{models}]\nllama_server:\n  url: http://127.0.0.1:9\n"
    arguments = {"model": str(models / "m.gguf"), "extra_args": ["--log-file", "/tmp/x"]}
    text = await start(tmp_path, config, arguments)
    assert "llama_server.allow_extra_args" in text
