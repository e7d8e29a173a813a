"""Loaded models under a memory budget, with the real embedded model over a real
`farmhand serve`: a second model evicts the idle first one (RSS stays that of one model),
keep_alive unloads a model on its own, a model whose context cannot fit the budget is a 400
before anything loads, and a load that fails frees what it took (issue 25: 640 MiB a try).
RSS is measured around the requests, never time."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from tests.support.real_servers import free_port, healthy, wait_until
from tests.support.serve_process import Served, serving

from farmhand.config.models import ModelConfig
from farmhand.errors import ModelError
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.providers.llamacpp.load import load_llama
from farmhand.service.model_memory import MIB, estimate_bytes

pytestmark = pytest.mark.e2e


def rss(pid: int) -> int:
    """Resident bytes of process `pid`."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmRSS")


def _ps(port: int) -> list[dict[str, Any]]:
    models: list[dict[str, Any]] = httpx.get(f"http://127.0.0.1:{port}/api/ps", timeout=30).json()[
        "models"
    ]
    return models


def _chat(port: int, model: str, **extra: Any) -> httpx.Response:
    return httpx.post(
        f"http://127.0.0.1:{port}/api/chat",
        json={
            "model": model,
            "messages": [{"role": "user", "content": "Say hi."}],
            "stream": False,
            "options": {"num_predict": 4},
            **extra,
        },
        timeout=300,
    )


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[int, Served]]:
    gguf = ensure_model(DEFAULT_MODEL)
    one = estimate_bytes(ModelConfig(name="a", model_path=str(gguf), n_ctx=1024), 1024)
    budget = (2 * one - 200 * MIB) // MIB  # room for one model, not two
    (tmp_path / "farmhand.yaml").write_text(
        f"server:\n  engine:\n    memory_mib: {budget}\n"
        "runtime:\n  models:\n"
        f"    - name: a\n      model_path: {gguf}\n      n_ctx: 1024\n"
        f"    - name: b\n      model_path: {gguf}\n      n_ctx: 1536\n"
        f"    - name: huge\n      model_path: {gguf}\n      n_ctx: 10000000\n"
    )
    port = free_port()
    with serving("--port", str(port), cwd=tmp_path, env={"FARMHAND_API_KEYS": ""}) as served:
        assert wait_until(lambda: healthy(port), timeout=60)  # the socket is bound after startup
        yield port, served


def test_an_idle_model_makes_room_for_another_and_keep_alive_unloads(
    server: tuple[int, Served],
) -> None:
    port, served = server
    pid = served.process.pid
    assert _chat(port, "a").status_code == 200
    assert [m["name"] for m in _ps(port)] == ["a"]
    entry = _ps(port)[0]
    assert entry["farmhand"]["slots"] >= 1 and entry["farmhand"]["active"] == 0
    assert entry["size"] == entry["farmhand"]["memory_bytes"] > 0
    with_one = rss(pid)
    assert _chat(port, "b").status_code == 200
    assert [m["name"] for m in _ps(port)] == ["b"]  # a was evicted, least recently used
    assert _chat(port, "a").status_code == 200
    assert [m["name"] for m in _ps(port)] == ["a"]
    # Three loads, one model's memory at a time (not three models' worth).
    assert rss(pid) < with_one * 1.5, (rss(pid), with_one)

    # A model past the whole budget is refused before it loads: nothing grows.
    before = rss(pid)
    huge = _chat(port, "huge")
    assert huge.status_code == 400, huge.text
    assert "n_ctx" in huge.json()["error"] and "memory_mib" in huge.json()["error"]
    assert rss(pid) < before + 100 * MIB

    # keep_alive: unloaded a moment after its last use, with no request to notice it.
    assert _chat(port, "a", keep_alive="1s").status_code == 200
    assert wait_until(lambda: _ps(port) == [], timeout=30)


def test_a_failed_load_frees_what_it_took() -> None:
    gguf = ensure_model(DEFAULT_MODEL)
    pid = int(Path("/proc/self/stat").read_text().split()[0])
    with pytest.raises(ModelError):  # once, so that libraries and caches are loaded
        load_llama(gguf, n_ctx=10_000_000)
    before = rss(pid)
    for _ in range(3):
        with pytest.raises(ModelError, match="n_ctx 10000000"):
            load_llama(gguf, n_ctx=10_000_000)
    assert rss(pid) - before < 100 * MIB, (rss(pid) - before) // MIB
