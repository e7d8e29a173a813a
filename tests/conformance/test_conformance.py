"""The MCP conformance suite (npm @modelcontextprotocol/conformance), offline, for both
protocol revisions farmhand speaks: 2025-11-25 (the handshake) and 2026-07-28 (stateless).

Client: `--suite all` with farmhand's own client code as the client under test
(tests/conformance/farmhand_client.py): every client scenario of the revision passes,
auth/* included (farmhand's OAuth on the SDK's client, with a browser that allows).

Server: `--suite all` against `farmhand serve`'s /mcp. Many scenarios call fixtures of the
suite's reference server (tools named test_image_content, prompts named
test_simple_prompt, resources under test://, logging, completions, sampling) that a
product server does not have; they do not apply and are not asserted, except that where
they ask for an unknown prompt or resource the error is the spec's. The scenarios that
apply to farmhand's own tools pass.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client
from tests.support.real_servers import free_port

from farmhand.version import farmhand_version

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).parents[2]
BIN = ROOT / "node_modules" / ".bin"
CLIENT = Path(__file__).with_name("farmhand_client.py")
VERSIONS = ["2025-11-25", "2026-07-28"]

AUTH_BOTH = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
]
CLIENT_SCENARIOS = {
    "2025-11-25": [
        "initialize",
        "tools_call",
        "elicitation-sep1034-client-defaults",
        "sse-retry",
        *AUTH_BOTH,
        "json-schema-2020-12-preservation",
    ],
    "2026-07-28": [
        "tools_call",
        "request-metadata",
        *AUTH_BOTH,
        "auth/resource-mismatch",
        "auth/offline-access-scope",
        "auth/offline-access-not-supported",
        "auth/authorization-server-migration",
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
        "json-schema-2020-12-preservation",
    ],
}
# Server scenarios that apply to farmhand's own tools (the rest need the reference
# server's fixtures).
SERVER_SCENARIOS = {
    "2025-11-25": [
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "tools-list",
        "server-sse-multiple-streams",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
    ],
    "2026-07-28": [
        "server-stateless",
        "tools-list",
        "server-sse-multiple-streams",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
        "caching",
        "http-header-validation",
        "http-custom-header-server-validation",
    ],
}
UNKNOWN_PROMPT = ["prompts-get-simple", "prompts-get-with-args", "prompts-get-with-image"]
UNKNOWN_RESOURCE = ["resources-read-text", "resources-read-binary", "resources-templates-read"]
# The 2025-11-25 spec's code for an unknown resource; 2026-07-28 retired it for -32602.
RESOURCE_NOT_FOUND = {"2025-11-25": "-32002", "2026-07-28": "-32602"}


def conformance(*args: str, cwd: Path, timeout: float = 900) -> subprocess.CompletedProcess[str]:
    if not (BIN / "conformance").exists():
        pytest.skip("the conformance suite is not installed (make setup: npm ci)")
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    command = [str(BIN / "conformance"), *args]
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def checks(results: Path, prefix: str) -> list[dict[str, Any]]:
    """The checks of the one result folder whose name is `prefix`-<timestamp>."""
    (folder,) = [p for p in results.glob(f"{prefix}-2*") if p.is_dir()]
    found: list[dict[str, Any]] = json.loads((folder / "checks.json").read_text())
    return found


def verdicts(found: list[dict[str, Any]]) -> dict[str, str]:
    """Status per check (a check the suite repeats counts by its worst outcome)."""
    order = ["SUCCESS", "WARNING", "SKIPPED", "FAILURE"]
    worst: dict[str, str] = {}
    for check in found:
        if check["status"] == "INFO":
            continue
        before = worst.get(check["id"], "SUCCESS")
        worst[check["id"]] = max(before, check["status"], key=order.index)
    return worst


def listed(version: str, kind: str) -> set[str]:
    """The scenario names `conformance list` gives for a revision (extensions left out)."""
    text = conformance("list", "--spec-version", version, cwd=ROOT).stdout
    part = text.split(f"{kind} scenarios", 1)[1].split("scenarios (", 1)[0]
    return {
        line.split()[1]
        for line in part.splitlines()
        if line.strip().startswith("-") and "[extension]" not in line
    }


def every_revision(
    tmp_path_factory: pytest.TempPathFactory, kind: str, *target: str
) -> dict[str, Path]:
    """`conformance KIND TARGET --suite all` once per revision; the result folder of each."""
    results = {}
    for version in VERSIONS:
        folder = results[version] = tmp_path_factory.mktemp(f"{kind}-{version}")
        suite = ["--spec-version", version, "--suite", "all", "-o", str(folder)]
        conformance(kind, *target, *suite, cwd=folder)
    return results


@pytest.mark.parametrize("version", VERSIONS)
def test_every_client_scenario_of_the_revision_is_run_here(version: str) -> None:
    assert listed(version, "Client") == set(CLIENT_SCENARIOS[version])


@pytest.fixture(scope="module")
def client_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Each revision's whole client suite, run once (the suite runs scenarios in parallel)."""
    path = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    command = f"env PYTHONPATH={path} {sys.executable} {CLIENT}"
    # --timeout: a busy machine starts Python slowly; nothing here asserts time.
    return every_revision(tmp_path_factory, "client", "--command", command, "--timeout", "120000")


@pytest.mark.parametrize(
    ("version", "scenario"), [(v, s) for v in VERSIONS for s in CLIENT_SCENARIOS[v]]
)
def test_client_scenario_passes_with_farmhands_client(
    version: str, scenario: str, client_results: dict[str, Path]
) -> None:
    found = verdicts(checks(client_results[version], scenario))
    # The suite measures the reconnect delay; "slightly late" is a WARNING it accepts (a busy
    # machine), too early or far too late a FAILURE.
    lenient = {"client-sse-retry-timing": {"SUCCESS", "WARNING"}}
    assert found
    for check, status in found.items():
        assert status in lenient.get(check, {"SUCCESS"}), (check, status, found)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`farmhand serve` with a model that is never called; yields its /mcp URL. The suite's
    requests carry the server's own origin, which farmhand lets in (its own page does too):
    no `allowed_origins` here."""
    folder = tmp_path_factory.mktemp("served")
    port = free_port()
    model = {"name": "farm", "provider": "openai", "model": "x", "base_url": "http://127.0.0.1:9"}
    (folder / "farmhand.yaml").write_text(yaml.safe_dump({"runtime": {"models": [model]}}))
    env = {**os.environ, "XDG_CONFIG_HOME": str(folder), "FARMHAND_MCP_SERVERS": ""}
    env["FARMHAND_HOME"] = str(folder / "home")
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "src"), env.get("PYTHONPATH", "")])
    process = subprocess.Popen(
        [sys.executable, "-m", "farmhand", "serve", "--port", str(port), "--log-level", "warning"],
        cwd=folder,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", port)) == 0:
                    break
            if process.poll() is not None:
                raise RuntimeError("farmhand serve exited before it listened")
            time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture(scope="module")
def server_results(served: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return every_revision(tmp_path_factory, "server", "--url", served)


@pytest.mark.parametrize(
    ("version", "scenario"), [(v, s) for v in VERSIONS for s in SERVER_SCENARIOS[v]]
)
def test_server_scenario_passes_on_farmhand_serve(
    version: str, scenario: str, server_results: dict[str, Path]
) -> None:
    found = verdicts(checks(server_results[version], f"server-{scenario}"))
    assert found and set(found.values()) == {"SUCCESS"}, found


@pytest.mark.parametrize(
    ("version", "scenario"), [(v, s) for v in VERSIONS for s in UNKNOWN_PROMPT]
)
def test_an_unknown_prompt_is_invalid_params(
    version: str, scenario: str, server_results: dict[str, Path]
) -> None:
    found = checks(server_results[version], f"server-{scenario}")
    messages = " ".join(str(c.get("errorMessage")) for c in found)
    assert "MCP error -32602: Unknown prompt" in messages, found


@pytest.mark.parametrize(
    ("version", "scenario"), [(v, s) for v in VERSIONS for s in UNKNOWN_RESOURCE]
)
def test_an_unknown_resource_is_the_revisions_error(
    version: str, scenario: str, server_results: dict[str, Path]
) -> None:
    found = checks(server_results[version], f"server-{scenario}")
    messages = " ".join(str(c.get("errorMessage")) for c in found)
    assert f"MCP error {RESOURCE_NOT_FOUND[version]}: Unknown resource" in messages, found


def test_server_info_names_farmhands_version(served: str) -> None:
    async def server_info() -> tuple[str, str]:
        async with Client(served, mode="legacy") as client:
            assert client.server_info is not None
            return client.server_info.name, client.server_info.version

    assert anyio.run(server_info) == ("farmhand", farmhand_version())
