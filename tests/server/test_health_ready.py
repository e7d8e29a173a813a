"""`/health` and `/ready` over a real uvicorn: open to a prober without a key or a known Host
(a load balancer, a kubelet), saying nothing but fixed words and model names (no URL, no
credential, no path), and `/ready` 503 naming what is not ready, or that the server drains
(when every other route answers 503 with Retry-After in its dialect's shape)."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from tests.support.live import LiveServer
from tests.support.postgres import fresh_database, postgres_server
from tests.support.real_servers import free_port

from farmhand.assembly import create_app
from farmhand.config.models import FarmhandConfig
from farmhand.providers.scripted import ScriptedProvider
from farmhand.server.drain import Drain

__all__ = ["postgres_server"]  # the session fixture, used by name below

KEY = "k-health-test"
SECRET = "hunter2"


@contextmanager
def live(home: Path, config: dict[str, Any], drain: Drain | None = None) -> Iterator[httpx.Client]:
    app = create_app(FarmhandConfig.model_validate(config), home=home, api_keys=[KEY], drain=drain)
    with LiveServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as client:
        yield client


@contextmanager
def listening() -> Iterator[int]:
    """A port that accepts TCP connections (the kernel completes them; nothing answers)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield sock.getsockname()[1]


def remote(name: str, port: int) -> dict[str, Any]:
    base_url = f"http://admin:{SECRET}@127.0.0.1:{port}/v1"
    return {"name": name, "provider": "openai", "model": "m", "base_url": base_url}


def test_health_and_ready_answer_without_a_key_from_any_host(tmp_path: Path) -> None:
    with listening() as port:
        config = {"runtime": {"models": [remote("remote", port)]}}
        with live(tmp_path / "home", config) as client:
            assert client.get("/v1/models").status_code == 401  # the API itself wants a key
            health = client.get("/health")
            assert (health.status_code, health.json()) == (200, {"status": "ok"})
            ready = client.get("/ready", headers={"Host": "10.1.2.3:14345"})
            assert ready.status_code == 200
            assert ready.json() == {
                "status": "ready",
                "checks": {"store": "ok", "models": {"remote": "ok"}},
            }
            # that Host reaches nothing else
            assert client.get("/", headers={"Host": "10.1.2.3:14345"}).status_code == 200
            assert client.get("/v1/models", headers={"Host": "10.1.2.3:14345"}).status_code >= 400


def test_ready_names_what_is_not_ready_without_saying_where(tmp_path: Path) -> None:
    closed = free_port()
    store = f"postgresql://farmhand:{SECRET}@127.0.0.1:{free_port()}/farmhand"
    missing = tmp_path / "secret-folder" / "model.gguf"
    config = {
        "server": {"store": store},
        "runtime": {
            "models": [
                remote("remote", closed),
                {"name": "local", "provider": "llamacpp", "model_path": str(missing)},
            ]
        },
    }
    with live(tmp_path / "home", config) as client:
        ready = client.get("/ready")
    assert ready.status_code == 503
    assert ready.json() == {
        "status": "not ready",
        "checks": {
            "store": "unreachable",
            "models": {"remote": "backend unreachable", "local": "model file missing"},
        },
    }
    for leak in (SECRET, "127.0.0.1", "postgresql", str(closed), "secret-folder", "admin"):
        assert leak not in ready.text


def test_draining_refuses_new_requests_with_retry_after_and_ready_says_so(tmp_path: Path) -> None:
    drain = Drain(timeout=30)
    with listening() as port:
        config = {"runtime": {"models": [remote("remote", port)]}}
        with live(tmp_path / "home", config, drain) as client:
            assert client.get("/ready").status_code == 200
            drain.begin()
            ready = client.get("/ready")
            assert (ready.status_code, ready.json()) == (503, {"status": "draining"})
            assert client.get("/health").status_code == 200
            auth = {"Authorization": f"Bearer {KEY}"}
            chat = {"model": "remote", "messages": [{"role": "user", "content": "hi"}]}
            openai = client.post("/v1/chat/completions", json=chat, headers=auth)
            assert openai.status_code == 503
            assert openai.headers["retry-after"] == "1"
            assert openai.json()["error"]["code"] == "shutting_down"
            ollama = client.post("/api/chat", json=chat, headers=auth)
            assert ollama.status_code == 503
            assert "shutting down" in ollama.json()["error"]


def test_models_from_a_provider_factory_of_its_own_count_as_ready(tmp_path: Path) -> None:
    # Their providers do not come from the config's backends (here: nothing listens there).
    config = FarmhandConfig.model_validate({"runtime": {"models": [remote("farm", free_port())]}})
    app = create_app(config, home=tmp_path, provider_factory=lambda _: ScriptedProvider([]))
    with LiveServer(app) as server:
        ready = httpx.get(f"{server.url}/ready", timeout=30)
    assert ready.json() == {"status": "ready", "checks": {"store": "ok", "models": {"farm": "ok"}}}


def test_ready_with_a_reachable_postgresql_store(postgres_server: str, tmp_path: Path) -> None:
    with listening() as port:
        store = fresh_database(postgres_server)
        config = {"server": {"store": store}, "runtime": {"models": [remote("remote", port)]}}
        with live(tmp_path / "home", config) as client:
            ready = client.get("/ready")
    checks = {"store": "ok", "models": {"remote": "ok"}}
    assert (ready.status_code, ready.json()) == (200, {"status": "ready", "checks": checks})


def test_a_model_with_deployments_is_ready_while_one_of_them_is(tmp_path: Path) -> None:
    """Its pool routes around a deployment that is down: one reachable is enough, and
    none reachable is named as the model's backend being unreachable."""

    def pooled(name: str, *ports: int) -> dict[str, Any]:
        deployments = [{"base_url": f"http://127.0.0.1:{port}/v1"} for port in ports]
        return {"name": name, "provider": "openai", "model": "m", "deployments": deployments}

    with listening() as port:
        models = [pooled("half", free_port(), port), pooled("none", free_port(), free_port())]
        with live(tmp_path / "home", {"runtime": {"models": models}}) as client:
            ready = client.get("/ready")
    assert ready.status_code == 503
    assert ready.json()["checks"]["models"] == {"half": "ok", "none": "backend unreachable"}
