"""Issue 31's pool test: three real llama-server processes on the small catalog model
behind one model of a real `farmhand serve`, driven by the `openai` SDK: 200 streamed
requests at concurrency 16, one server killed with SIGKILL midway while it answers.

Every request whose stream had not yet carried any of the answer is answered in full
(the pool sends its turn to another server); the ones cut off mid-answer end with an
error that names the killed server and says a started answer is not sent twice. The
server is then started again on its port, and traffic returns to it: `/api/ps` shows its
served count growing once its health check passes.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx
import openai
import pytest
from tests.support.real_servers import free_port, healthy, wait_until
from tests.support.serve_process import serving

from farmhand.llamaserver.process import LlamaServerProcess, StartOptions
from farmhand.models.assemble import ensure_model

pytestmark = [pytest.mark.e2e, pytest.mark.anyio]

REQUESTS = 200
CONCURRENCY = 16
KILL_AFTER = 70
"""Requests answered before one server is killed (and it must be answering some)."""
VICTIM = 1
RETURN_DEADLINE = 120.0
"""Seconds traffic may take to reach the restarted server (its health check is at most
30 s away once it is up, plus its own start)."""
ASK = [{"role": "user", "content": "Count from 1 to 10, separated by spaces."}]


@dataclass
class Outcome:
    text: str = ""
    finish: str = ""
    error: str = ""
    content_before_error: bool = False


@pytest.fixture
async def llama_servers(tmp_path: Path) -> AsyncIterator[list[tuple[LlamaServerProcess, int]]]:
    gguf = ensure_model("qwen2.5-coder:0.5b")
    servers = [(LlamaServerProcess(tmp_path / f"llama-{i}"), free_port()) for i in range(3)]
    try:
        async with anyio.create_task_group() as group:
            for process, port in servers:
                group.start_soon(process.start, options(gguf, port))
        yield servers
    finally:
        for process, _ in servers:
            await process.aclose()


def options(gguf: Path, port: int) -> StartOptions:
    return StartOptions(model=str(gguf), port=port, ctx_size=4096, threads=1)


@pytest.fixture
def farmhand(tmp_path: Path, llama_servers: list[tuple[LlamaServerProcess, int]]) -> Iterator[str]:
    urls = "".join(f"        - base_url: http://127.0.0.1:{port}/v1\n" for _, port in llama_servers)
    (tmp_path / "farmhand.yaml").write_text(
        "runtime:\n  models:\n    - name: pool\n      provider: openai\n      model: qwen\n"
        f"      max_tokens: 24\n      deployments:\n{urls}"
    )
    port = free_port()
    env = {"FARMHAND_API_KEYS": "", "FARMHAND_HOME": str(tmp_path / "home")}
    with serving("--port", str(port), cwd=tmp_path, env=env):
        assert wait_until(lambda: healthy(port), timeout=60)
        yield f"http://127.0.0.1:{port}"


async def deployments(http: httpx.AsyncClient, url: str) -> list[dict[str, Any]]:
    entries = (await http.get(url + "/api/ps")).json()["models"]
    listed: list[dict[str, Any]] = entries[0]["farmhand"]["deployments"] if entries else []
    return listed


async def one_request(client: openai.AsyncOpenAI) -> Outcome:
    outcome = Outcome()
    try:
        stream = await client.chat.completions.create(
            model="pool",
            messages=ASK,
            stream=True,
            temperature=0,  # type: ignore[arg-type]
        )
        async for chunk in stream:
            if not chunk.choices:
                continue
            outcome.text += chunk.choices[0].delta.content or ""
            outcome.finish = chunk.choices[0].finish_reason or outcome.finish
    except openai.APIError as exc:
        outcome.error = exc.message
        outcome.content_before_error = bool(outcome.text)
    return outcome


async def test_a_killed_server_fails_only_the_answers_it_had_begun(
    farmhand: str, llama_servers: list[tuple[LlamaServerProcess, int]]
) -> None:
    victim, victim_port = llama_servers[VICTIM]
    victim_url = f"http://127.0.0.1:{victim_port}/v1"
    client = openai.AsyncOpenAI(
        base_url=farmhand + "/v1", api_key="none", max_retries=0, timeout=300
    )
    outcomes: list[Outcome] = []
    killed = anyio.Event()
    at_kill: list[dict[str, Any]] = []
    next_request = iter(range(REQUESTS))

    async def worker() -> None:
        for _ in next_request:
            outcomes.append(await one_request(client))

    async def killer(http: httpx.AsyncClient) -> None:
        while len(outcomes) < KILL_AFTER:
            await anyio.sleep(0.05)
        while True:  # kill it while it is answering
            at_kill[:] = await deployments(http, farmhand)
            if at_kill[VICTIM]["in_flight"] > 0 or len(outcomes) >= REQUESTS - CONCURRENCY:
                break
            await anyio.sleep(0.02)
        running = victim.running
        assert running is not None
        running.process.kill()  # SIGKILL: no goodbye on its open connections
        killed.set()

    async with httpx.AsyncClient(timeout=30) as http:
        async with anyio.create_task_group() as group:
            group.start_soon(killer, http)
            for _ in range(CONCURRENCY):
                group.start_soon(worker)
        assert killed.is_set()
        after_run = await deployments(http, farmhand)

        # Started again on its port: traffic returns once its health check passes.
        await victim.start(options(ensure_model("qwen2.5-coder:0.5b"), victim_port))
        served_before = after_run[VICTIM]["served"]
        deadline = time.monotonic() + RETURN_DEADLINE
        returned: list[dict[str, Any]] = []
        while time.monotonic() < deadline:
            outcome = await one_request(client)
            assert outcome.text and outcome.finish and not outcome.error, outcome
            returned = await deployments(http, farmhand)
            if returned[VICTIM]["served"] > served_before:
                break
        await client.close()

    assert len(outcomes) == REQUESTS
    failed = [o for o in outcomes if o.error]
    print(
        f"\n{REQUESTS - len(failed)} answered, {len(failed)} cut off; at the kill:"
        f" {[d['in_flight'] for d in at_kill]} in flight; after the run: {after_run}"
    )
    # Nothing that had not begun to stream failed: the pool sent it to another server.
    assert [o for o in failed if not o.content_before_error] == []
    # ... and whole: a stream cut short is an error, never a short answer.
    assert all(o.text.strip() and o.finish in ("stop", "length") for o in outcomes if not o.error)
    # What was cut off says where and why, and at most what was in flight could be.
    for outcome in failed:
        assert f"deployment {victim_url} failed after its answer had begun" in outcome.error
        assert "never sent again to another deployment" in outcome.error
    assert len(failed) <= CONCURRENCY
    assert at_kill[VICTIM]["in_flight"] > 0
    assert after_run[VICTIM]["failures"] >= 1
    assert after_run[VICTIM]["state"] in ("cooling", "checking")
    others = [d for i, d in enumerate(after_run) if i != VICTIM]
    assert all(d["state"] == "healthy" and d["failures"] == 0 for d in others)
    # The restarted server answers again.
    assert returned[VICTIM]["served"] > served_before, returned
    assert returned[VICTIM]["state"] == "healthy"
