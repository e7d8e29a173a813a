"""`farmhand serve --log-format json --log-level debug`, as a real process: every stderr line
is one JSON object (time, level, logger, message), each request has its line with method,
route template, status, duration and request id (the one sent back in X-Request-ID; the
probes' lines at debug), debug adds something to read, and neither the API key nor the
conversation is ever written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import yaml
from tests.support.real_servers import free_port
from tests.support.scripted_backend import ScriptedBackend, model_config, say
from tests.support.serve_process import serving

KEY = "k-never-logged-31"
QUESTION = "which fruit did the zebra-quokka hide"
ANSWER = "the answer is a persimmon-marmoset"


def test_json_logs_one_object_a_line_with_request_fields_and_no_secrets(tmp_path: Path) -> None:
    with ScriptedBackend([say(ANSWER)]) as backend:
        config = {"runtime": {"models": [model_config(backend.url)]}}
        (tmp_path / "farmhand.yaml").write_text(yaml.safe_dump(config))
        port = free_port()
        env = {"FARMHAND_API_KEYS": KEY, "FARMHAND_HOME": str(tmp_path / "home")}
        args = ("--port", str(port), "--log-format", "json", "--log-level", "debug")
        with serving(*args, cwd=tmp_path, env=env) as served:
            url = f"http://127.0.0.1:{port}"
            chat = {"model": "scripted", "messages": [{"role": "user", "content": QUESTION}]}
            answer = httpx.post(
                f"{url}/v1/chat/completions",
                json=chat,
                headers={"Authorization": f"Bearer {KEY}", "X-Request-ID": "lb-trace-7"},
                timeout=60,
            )
            assert answer.json()["choices"][0]["message"]["content"] == ANSWER
            assert answer.headers["x-request-id"] == "lb-trace-7"
            refused = httpx.get(f"{url}/v1/responses/resp_1", headers={"X-Request-ID": "a b<x>"})
            assert refused.status_code == 401
            minted = refused.headers["x-request-id"]  # a client id with spaces is replaced
            assert minted != "a b<x>"
            probe = httpx.get(f"{url}/health").headers["x-request-id"]
            log = served.stop()
    entries = [json.loads(line) for line in log.splitlines() if line.strip()]
    for entry in entries:
        assert {"time", "level", "logger", "message"} <= entry.keys()
    requests = [e for e in entries if e["logger"] == "farmhand.requests" and e["level"] == "info"]
    assert all("route" in e for e in requests)
    chat_line = one(requests, "lb-trace-7")
    assert chat_line["method"] == "POST"
    assert chat_line["route"] == "/v1/chat/completions"
    assert chat_line["status"] == 200
    assert isinstance(chat_line["duration_ms"], float)
    refused_line = one(requests, minted)
    assert (refused_line["route"], refused_line["status"]) == ("/v1/responses/{response_id}", 401)
    ended = [e for e in entries if e["logger"] == "farmhand.requests" and "route" in e]
    probes = [e for e in ended if e["level"] == "debug"]
    assert one(probes, probe)["route"] == "/health"  # probes at debug: not every 5 s at info
    debug = [e for e in entries if e["level"] == "debug"]
    assert any(e["message"].endswith("request started") for e in debug)
    assert any(e["message"].startswith("tools offered to the model") for e in debug)
    assert any(e["message"] == "Application shutdown complete." for e in entries)
    for secret in (KEY, QUESTION, ANSWER, "zebra", "persimmon", "Bearer"):
        assert secret not in log


def one(entries: list[dict[str, Any]], request_id: str) -> dict[str, Any]:
    matching = [e for e in entries if e.get("request_id") == request_id]
    assert len(matching) == 1, matching
    return matching[0]
