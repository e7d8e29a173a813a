"""The MCP conformance suite (npm @modelcontextprotocol/conformance), offline, for both
protocol revisions farmhand speaks: 2025-11-25 (the handshake) and 2026-07-28 (stateless).

Client: every scenario of the revision's `--suite all`, with farmhand's own client code as
the client under test (tests/conformance/farmhand_client.py), passes, auth/* included
(farmhand's OAuth on the SDK's client, with a browser that allows).

Server: `--suite all` against `farmhand serve`'s /mcp. Many scenarios call fixtures of the
suite's reference server (SERVER_SCENARIOS says which) that a product server does not
have; they do not apply and are not asserted, except that where they ask for an unknown
prompt or resource the answer is the protocol's error. The scenarios that apply to
farmhand's own tools pass, among them DNS rebinding (the server's own origin let in) and
2026-07-28's header validation (a whitespace-padded `Mcp-Name` accepted).
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
# Server scenarios that apply to farmhand's own tools, all of whose checks pass. The others
# call fixtures of the suite's reference server that a product server does not have:
# prompts named test_simple_prompt, resources under test://, tools returning images, audio
# or progress, asking for sampling or elicitation, `json_schema_2020_12_tool`, tools with
# x-mcp-header annotations (http-custom-header-server-validation: farmhand's have none),
# the test_input_required_* tools (input-required-*), the reconnection tool of
# server-sse-polling, logging and completions.
SERVER_SCENARIOS = {
    "2025-11-25": [
        "server-initialize",
        "server-session-lifecycle",
        "ping",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-error",
        "server-sse-multiple-streams",
        "resources-list",
        "prompts-list",
        "dns-rebinding-protection",
    ],
    "2026-07-28": [
        "server-stateless",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-error",
        "server-sse-multiple-streams",
        "resources-list",
        "prompts-list",
        "sep-2164-resource-not-found",
        "dns-rebinding-protection",
        "caching",
        "http-header-validation",
        "input-required-result-ignore-extra-params",
        "input-required-result-unsupported-methods",
    ],
}
# Checks of an applicable scenario that need the reference server's diagnostic tool.
FIXTURE_CHECKS = {
    "sep-2575-server-rejects-undeclared-capability": "test_missing_capability",
    "sep-2575-missing-capability-http-400": "test_missing_capability",
}
UNKNOWN_PROMPT = {
    "prompts-get-simple": "test_simple_prompt",
    "prompts-get-with-args": "test_prompt_with_arguments",
    "prompts-get-with-image": "test_prompt_with_image",
}
UNKNOWN_RESOURCE = {
    "resources-read-text": "test://static-text",
    "resources-read-binary": "test://static-binary",
    "resources-templates-read": "test://template/123/data",
}


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


def failed(
    found: list[dict[str, Any]], lenient: dict[str, set[str]] | None = None
) -> list[tuple[str, str, str]]:
    """The checks that did not pass: FAILURE or WARNING (unless `lenient` allows it for that
    check). SKIPPED is a check of something farmhand does not use (a client that declares no
    roots, sends no prompts/get), not a failure; a check that failed upstream makes those
    after it SKIPPED, but is a FAILURE itself."""
    allowed = lenient or {}
    return [
        (c["id"], c["status"], str(c.get("errorMessage")))
        for c in found
        if c["status"] in ("FAILURE", "WARNING") and c["status"] not in allowed.get(c["id"], ())
    ]


def passed_some(found: list[dict[str, Any]]) -> bool:
    return any(c["status"] == "SUCCESS" for c in found)


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
    tmp_path_factory: pytest.TempPathFactory, kind: str, *target: str, one_by_one: bool = False
) -> dict[str, Path]:
    """`conformance KIND TARGET --suite all` once per revision; the result folder of each.
    `one_by_one`: each client scenario of the suite on its own instead (the suite starts
    a suite's clients all at once, and thirty Python clients starting together on a small
    machine missed the suite's own deadlines)."""
    results = {}
    for version in VERSIONS:
        folder = results[version] = tmp_path_factory.mktemp(f"{kind}-{version}")
        each = [["--scenario", s] for s in CLIENT_SCENARIOS[version]] if one_by_one else []
        for which in each or [["--suite", "all"]]:
            suite = ["--spec-version", version, *which, "-o", str(folder)]
            conformance(kind, *target, *suite, cwd=folder)
    return results


@pytest.mark.parametrize("version", VERSIONS)
def test_every_client_scenario_of_the_revision_is_run_here(version: str) -> None:
    assert listed(version, "Client") == set(CLIENT_SCENARIOS[version])


@pytest.fixture(scope="module")
def client_results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Every client scenario of each revision (the revision's `--suite all`: the test above
    keeps the list equal to the suite's), one at a time."""
    path = os.pathsep.join([str(ROOT / "src"), str(ROOT)])
    command = f"env PYTHONPATH={path} {sys.executable} {CLIENT}"
    # --timeout: a busy machine starts Python slowly; nothing here asserts time.
    target = ["--command", command, "--timeout", "120000"]
    return every_revision(tmp_path_factory, "client", *target, one_by_one=True)


@pytest.mark.parametrize(
    ("version", "scenario"), [(v, s) for v in VERSIONS for s in CLIENT_SCENARIOS[v]]
)
def test_client_scenario_passes_with_farmhands_client(
    version: str, scenario: str, client_results: dict[str, Path]
) -> None:
    found = checks(client_results[version], scenario)
    # The suite measures the reconnect delay; "slightly late" is a WARNING it accepts (a busy
    # machine), too early or far too late a FAILURE.
    lenient = {"client-sse-retry-timing": {"WARNING"}}
    assert passed_some(found) and not failed(found, lenient), failed(found, lenient)


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
    found = checks(server_results[version], f"server-{scenario}")
    for check in [c for c in found if c["id"] in FIXTURE_CHECKS]:
        assert FIXTURE_CHECKS[check["id"]] in str(check.get("errorMessage")), check
    rest = [c for c in found if c["id"] not in FIXTURE_CHECKS]
    assert passed_some(rest) and not failed(rest), failed(rest)


UNKNOWN = [*UNKNOWN_PROMPT, *UNKNOWN_RESOURCE]


@pytest.mark.parametrize(("version", "scenario"), [(v, s) for v in VERSIONS for s in UNKNOWN])
def test_an_unknown_prompt_or_resource_is_a_protocol_error(
    version: str, scenario: str, server_results: dict[str, Path]
) -> None:
    """The reference server's prompts and resources are not farmhand's: the answer is the
    protocol's error for an unknown one, naming it (its code per revision is checked by
    tests/mcpserver/test_error_codes.py), never a crash."""
    found = checks(server_results[version], f"server-{scenario}")
    (check,) = [c for c in found if c["id"] == scenario]
    kind = "prompt" if scenario in UNKNOWN_PROMPT else "resource"
    name = {**UNKNOWN_PROMPT, **UNKNOWN_RESOURCE}[scenario]
    assert check["errorMessage"] == f"Failed: Unknown {kind}: {name}", check


def test_server_info_names_farmhands_version(served: str) -> None:
    async def server_info() -> tuple[str, str]:
        async with Client(served, mode="legacy") as client:
            assert client.server_info is not None
            return client.server_info.name, client.server_info.version

    assert anyio.run(server_info) == ("farmhand", farmhand_version())
