"""Property: no body a client sends to a JSON route is a 5xx.

Bodies are drawn both as arbitrary JSON and as each route's own shape with wrong values in
its fields (the cases a hand-written parser forgets), among them the shapes of issue 25:
400-digit integers, URLs the parser refuses, YAML tags and dates, deep nesting. The app
runs under a real uvicorn with a model that answers "ok", so over a thousand examples take
seconds; MCP servers named in bodies are refused by the default policy, so nothing is
started.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.security.conftest import CHAT, HOSTILE_VALUES, JSON_ROUTES, serve

# The shapes that once broke the server (huge integers, bad URLs, YAML tags, deep nesting)
# are drawn as often as any other scalar.
scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats()
    | st.text(max_size=20)
    | st.sampled_from(HOSTILE_VALUES)
)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
FIELDS = [
    "model", "messages", "stream", "tools", "tool_choice", "temperature", "max_tokens",
    "options", "mcp_servers", "tools_path", "max_tool_rounds", "tool_timeout", "stop", "seed",
    "name", "config", "pattern", "limit", "jit_tools", "task_id", "stream_options", "n",
    "keep_alive", "template", "prompt", "input", "url", "server_url", "base_url",
]  # fmt: skip
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "assistant", "tool", "system", "x"]) | json_values},
        optional={
            "content": json_values,
            "tool_calls": json_values,
            "tool_call_id": json_values,
        },
    ),
    max_size=3,
)
shaped = st.builds(
    lambda base, changes, msgs: {**base, **changes, "messages": msgs},
    st.just(CHAT),
    st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=4),
    messages,
)
bodies = json_values | shaped


def test_no_body_is_a_5xx(tmp_path: Path) -> None:
    server, _ = serve(tmp_path)
    paths = [p for p in JSON_ROUTES if "demo" not in p]
    with server, httpx.Client(base_url=server.url, timeout=30) as client:

        @settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
        @given(path=st.sampled_from(paths), body=bodies)
        def check(path: str, body: Any) -> None:
            text = json.dumps(body, allow_nan=True)
            reply = client.post(path, content=text, headers={"content-type": "application/json"})
            assert reply.status_code < 500, (path, body, reply.text)

        check()
