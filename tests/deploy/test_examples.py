"""The deployment examples in deploy/ hold together: every YAML file parses, the farmhand
config each one carries loads with the loader `farmhand serve` uses, the probes and health
checks name routes the app has, the config file lands where the command reads it, the ports
agree, the models' backends are services the example defines, the store URL comes from a
secret, and the grace before SIGKILL outlasts `server.drain_timeout`."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from starlette.routing import Match

from farmhand.assembly import create_app
from farmhand.config.loader import load_config
from farmhand.config.models import FarmhandConfig
from farmhand.providers.factory import backend_urls
from farmhand.service.database import is_postgresql

DEPLOY = Path(__file__).parents[2] / "deploy"
COMPOSE = DEPLOY / "compose"
KUBERNETES = DEPLOY / "kubernetes"
STORE_URL = "postgresql://farmhand:not-the-password@postgres:5432/farmhand"
ENVIRON = {"FARMHAND_STORE_URL": STORE_URL}


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]


def flag(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def is_route(config: FarmhandConfig, home: Path, path: str) -> bool:
    """Whether `farmhand serve`'s app answers GET `path` (a route, not the 404)."""
    app = create_app(config, home=home, api_keys=["k"])
    scope = {"type": "http", "method": "GET", "path": path, "root_path": ""}
    return any(route.matches(scope)[0] == Match.FULL for route in app.routes)


def seconds(text: str) -> float:
    match = re.fullmatch(r"(\d+)(s|m)", text)
    assert match, f"not a duration: {text}"
    return int(match[1]) * (60 if match[2] == "m" else 1)


def check_config(config: FarmhandConfig, raw: str, backends: dict[str, int]) -> None:
    assert is_postgresql(config.server.store)
    assert "${env:FARMHAND_STORE_URL}" in raw  # the password is never in the file
    assert config.runtime.models
    served = set()
    for model in config.runtime.models:
        for base_url in backend_urls(model):
            url = re.fullmatch(r"http://([\w-]+):(\d+)/v1", base_url)
            assert url, f"{model.name}: {base_url}"
            assert backends.get(url[1]) == int(url[2]), f"{model.name}'s backend is not defined"
            served.add(url[1])
    assert served == set(backends)  # every backend the example runs serves a model


@pytest.mark.parametrize("path", sorted(DEPLOY.rglob("*.y*ml")), ids=lambda p: p.name)
def test_every_yaml_file_parses(path: Path) -> None:
    assert documents(path)


def test_compose_example(tmp_path: Path) -> None:
    (compose,) = documents(COMPOSE / "compose.yaml")
    services = compose["services"]
    farmhand = services["farmhand"]
    args = farmhand["command"]
    assert flag(args, "--host") == "0.0.0.0"
    port = int(flag(args, "--port"))
    config_path = flag(args, "--config")
    assert f"./farmhand.yaml:{config_path}:ro" in farmhand["volumes"]
    assert farmhand["environment"]["FARMHAND_STORE_URL"].startswith("postgresql://")
    assert "FARMHAND_API_KEYS" in farmhand["environment"]  # beyond loopback, keys
    assert farmhand["deploy"]["replicas"] >= 2

    raw = (COMPOSE / "farmhand.yaml").read_text()
    config = load_config(COMPOSE / "farmhand.yaml", environ=ENVIRON)
    assert config.server.store == STORE_URL
    llamas = {
        name: int(flag(s["command"], "--port"))
        for name, s in services.items()
        if "llama.cpp" in s.get("image", "")
    }
    assert len(llamas) == 2
    check_config(config, raw, llamas)
    assert seconds(farmhand["stop_grace_period"]) > config.server.drain_timeout

    probe = " ".join(farmhand["healthcheck"]["test"])
    url = re.search(r"http://127\.0\.0\.1:(\d+)(/\w+)", probe)
    assert url and int(url[1]) == port
    assert url[2] == "/ready" and is_route(config, tmp_path, url[2])

    nginx = (COMPOSE / "nginx.conf").read_text()
    assert f"server farmhand:{port};" in nginx
    mounted = [v for v in services["nginx"]["volumes"] if v.startswith("./nginx.conf:")]
    assert mounted


def test_kubernetes_example(tmp_path: Path) -> None:
    manifests = documents(KUBERNETES / "farmhand.yaml")
    by_kind = {d["kind"]: d for d in manifests}
    config_map, deployment, service = (
        by_kind["ConfigMap"],
        by_kind["Deployment"],
        by_kind["Service"],
    )
    pod = deployment["spec"]["template"]
    (container,) = pod["spec"]["containers"]
    args = container["args"]
    config_path = Path(flag(args, "--config"))
    port = int(flag(args, "--port"))
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}

    (mount,) = container["volumeMounts"]
    assert Path(mount["mountPath"]) == config_path.parent
    (volume,) = [v for v in pod["spec"]["volumes"] if v["name"] == mount["name"]]
    assert volume["configMap"]["name"] == config_map["metadata"]["name"]
    raw = config_map["data"][config_path.name]
    (tmp_path / "farmhand.yaml").write_text(raw)
    config = load_config(tmp_path / "farmhand.yaml", environ=ENVIRON)

    secrets = {
        e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"] if "valueFrom" in e
    }
    assert set(secrets) >= {"FARMHAND_STORE_URL", "FARMHAND_API_KEYS"}

    backends = {}
    for doc in documents(KUBERNETES / "llama-server.yaml"):
        if doc["kind"] == "Service":
            backends[doc["metadata"]["name"]] = doc["spec"]["ports"][0]["port"]
    assert len(backends) == 2
    check_config(config, raw, backends)

    probes = {"livenessProbe": "/health", "readinessProbe": "/ready"}
    for probe, path in probes.items():
        get = container[probe]["httpGet"]
        assert get["path"] == path and is_route(config, tmp_path / "home", path)
        assert ports[get["port"]] == port
    pre_stop = container["lifecycle"]["preStop"]["exec"]["command"]
    assert pre_stop[0] == "sleep"  # the grace counts from before the hook
    drain_ends = int(pre_stop[1]) + config.server.drain_timeout
    assert pod["spec"]["terminationGracePeriodSeconds"] > drain_ends

    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert all(p["targetPort"] in ports for p in service["spec"]["ports"])


def test_the_dockerfile_serves_where_the_examples_look() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    command = re.search(r"^CMD (\[.*\])$", text, re.M)
    assert command
    args = yaml.safe_load(command[1])
    assert flag(args, "--config") == "/etc/farmhand/farmhand.yaml"
    assert shlex.join(args) in shlex.join(
        documents(COMPOSE / "compose.yaml")[0]["services"]["farmhand"]["command"]
    )
