"""Attack 8 (bodies): client mistakes that used to be 500s with two tracebacks in the log.

JSON nested 1,000 deep in a 2 KB body, a lone surrogate, NaN and Infinity, each sent to every
JSON route: each is a 400 in the route's dialect that says what was wrong, the model is never
asked, and the server logs no traceback.
"""

from __future__ import annotations

import logging

import httpx
import pytest
from tests.security.conftest import CHAT, JSON_ROUTES, Farm

DEEP = b'{"model": "farm", "messages": ' + b"[" * 1000 + b"]" * 1000 + b"}"
BODIES = {
    "deep": (DEEP, "nested more than"),
    "surrogate": (
        b'{"model": "farm", "messages": [{"role": "user", "content": "\\ud800"}]}',
        "lone UTF-16 surrogate",
    ),
    "nan": (b'{"model": "farm", "temperature": NaN, "messages": []}', "NaN"),
    "infinity": (b'{"model": "farm", "options": {"temperature": -Infinity}}', "Infinity"),
    "not utf-8": (b'{"model": "\xff"}', "not UTF-8"),
    "not json": (b'{"model": ', "not valid JSON"),
}


@pytest.mark.parametrize("path", [*JSON_ROUTES, "/mcp"])
@pytest.mark.parametrize("kind", BODIES)
def test_a_bad_body_is_a_400_that_says_why(
    farm: Farm, path: str, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    body, words = BODIES[kind]
    assert len(body) < 2200
    with caplog.at_level(logging.INFO):
        reply = httpx.post(
            farm.url + path, content=body, headers={"Content-Type": "application/json"}
        )
    assert reply.status_code == 400, reply.text
    if path.startswith("/api/"):
        message = reply.json()["error"]
    elif path == "/mcp":
        message = reply.json()["error"]["message"]
    else:
        message = reply.json()["error"]["message"]
        assert reply.json()["error"]["type"] == "invalid_request_error"
    assert words in message
    assert farm.model.turns == []
    assert "Traceback" not in caplog.text


def test_arguments_nested_too_deep_are_a_broken_call_not_a_crash(farm: Farm) -> None:
    # A tool call's `arguments` is JSON inside a string: the same rules apply to it.
    messages = [
        *CHAT["messages"],
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "f", "arguments": "[" * 1000 + "]" * 1000},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "done"},
    ]
    reply = httpx.post(
        farm.url + "/v1/chat/completions", json={"model": "farm", "messages": messages}
    )
    assert reply.status_code == 200, reply.text
