"""Attack 1: a web page the user visits talks to `farmhand serve` on 127.0.0.1.

Replayed as a browser sends it: a cross-site "simple" POST (`text/plain`, no preflight)
with the page's Origin; a DNS-rebinding page whose requests carry its own Host name; an
`<img>`/`<script>` load marked cross-site by Sec-Fetch-Site; and a CORS preflight. Each is
refused before anything runs: the model was never asked and no project was written.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from tests.security.conftest import JSON_ROUTES, Farm, serve
from tests.support.live import scripted_config

from farmhand.config.models import FarmhandConfig

EVIL = "http://evil.example"


def assert_nothing_ran(farm: Farm) -> None:
    assert farm.model.turns == []
    assert not (farm.home / "projects" / "default" / "planted").exists()


@pytest.mark.parametrize("path", JSON_ROUTES)
def test_a_cross_site_simple_post_is_refused(farm: Farm, path: str) -> None:
    reply = httpx.post(
        farm.url + path,
        content=json.dumps(JSON_ROUTES[path]),
        headers={"Content-Type": "text/plain;charset=UTF-8", "Origin": EVIL},
    )
    assert reply.status_code == 403, reply.text
    assert "server.allowed_origins" in reply.text
    assert "access-control-allow-origin" not in reply.headers
    assert_nothing_ran(farm)


@pytest.mark.parametrize("path", JSON_ROUTES)
def test_a_form_post_without_origin_is_refused_for_its_media_type(farm: Farm, path: str) -> None:
    # What a page could send if a browser left Origin out: still not JSON, so never read.
    reply = httpx.post(
        farm.url + path,
        content=json.dumps(JSON_ROUTES[path]),
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert reply.status_code == 415, reply.text
    assert "Content-Type: application/json" in reply.text
    assert_nothing_ran(farm)


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("GET", "/v1/models"),
        ("GET", "/api/tags"),
        ("GET", "/api/tools"),
        ("GET", "/v1/projects/default"),
        ("POST", "/v1/chat/completions"),
        ("POST", "/api/chat"),
        ("POST", "/mcp"),
    ],
)
def test_dns_rebinding_is_refused_on_every_route(farm: Farm, method: str, path: str) -> None:
    # The page's own name resolved to 127.0.0.1; its requests are same-origin to it, so
    # they carry JSON and Origin == its own host: only Host gives it away.
    host = f"rebind.evil.example:{farm.server.port}"
    reply = httpx.request(
        method,
        farm.url + path,
        json=JSON_ROUTES.get(path, {}),
        headers={"Host": host, "Origin": f"http://{host}"},
    )
    assert reply.status_code == 421, reply.text
    assert "server.allowed_hosts" in reply.text
    assert_nothing_ran(farm)


def test_a_cross_site_load_without_origin_is_refused(farm: Farm) -> None:
    reply = httpx.get(
        farm.url + "/v1/projects/default",
        headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"},
    )
    assert reply.status_code == 403, reply.text


def test_a_cors_preflight_from_an_unlisted_origin_gets_no_cors_headers(farm: Farm) -> None:
    reply = httpx.options(
        farm.url + "/v1/chat/completions",
        headers={
            "Origin": EVIL,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    assert reply.status_code == 403
    assert "access-control-allow-origin" not in reply.headers


def test_health_and_root_stay_open(farm: Farm) -> None:
    for path in ("/", "/health"):
        reply = httpx.get(farm.url + path, headers={"Host": "anything.example", "Origin": EVIL})
        assert reply.status_code == 200


def test_ordinary_clients_pass(farm: Farm) -> None:
    # What SDKs and curl send: loopback Host, JSON, no Origin.
    reply = httpx.post(farm.url + "/v1/chat/completions", json=JSON_ROUTES["/v1/chat/completions"])
    assert reply.status_code == 200, reply.text
    assert reply.json()["choices"][0]["message"]["content"] == "ok"
    localhost = httpx.get(f"http://localhost:{farm.server.port}/v1/models")
    assert localhost.status_code == 200


def test_a_listed_origin_gets_cors_and_its_requests_run(tmp_path: Path) -> None:
    config = scripted_config().model_dump()
    config["server"] = {"allowed_origins": ["http://localhost:3000"]}
    server, model = serve(tmp_path, FarmhandConfig.model_validate(config))
    with server:
        preflight = httpx.options(
            server.url + "/v1/chat/completions",
            headers={
                "Origin": "http://localhost:3000",
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type, authorization",
            },
        )
        assert preflight.status_code == 200, preflight.text
        assert preflight.headers["access-control-allow-origin"] == "http://localhost:3000"
        reply = httpx.post(
            server.url + "/v1/chat/completions",
            json=JSON_ROUTES["/v1/chat/completions"],
            headers={"Origin": "http://localhost:3000"},
        )
        assert reply.status_code == 200, reply.text
        assert reply.headers["access-control-allow-origin"] == "http://localhost:3000"
        other = httpx.post(
            server.url + "/v1/chat/completions",
            json=JSON_ROUTES["/v1/chat/completions"],
            headers={"Origin": "http://localhost:3001"},
        )
        assert other.status_code == 403
    assert len(model.turns) == 1


def test_an_operator_host_name_is_allowed(tmp_path: Path) -> None:
    config = scripted_config().model_dump()
    config["server"] = {"allowed_hosts": ["farm.lan"]}
    server, _ = serve(tmp_path, FarmhandConfig.model_validate(config))
    with server:
        ok = httpx.get(server.url + "/v1/models", headers={"Host": f"farm.lan:{server.port}"})
        assert ok.status_code == 200
        other = httpx.get(server.url + "/v1/models", headers={"Host": "farm.lan.evil.example"})
        assert other.status_code == 421
