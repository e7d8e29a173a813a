"""Eval results for the HTML report's tests: two targets over a suite whose prompt holds a
script tag, one target answering right, the other writing markup into its call and answer."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import anyio

from farmhand.eval.runner import run_suite
from farmhand.eval.scoring import TargetSummary
from farmhand.eval.suite import Suite, parse_suite
from farmhand.messages import ToolCall
from farmhand.providers.scripted import ScriptedProvider, Step

HOSTILE = "<script>alert('prompt')</script>"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
        },
    }
]
LINES = [
    json.dumps({"toolset": "weather", "tools": TOOLS}),
    json.dumps(
        {
            "id": "paris",
            "category": "single",
            "prompt": f"Weather in Paris? {HOSTILE}",
            "tools": "@weather",
            "expected": [{"name": "get_weather", "arguments": {"city": ["Paris", "Paris, FR"]}}],
        }
    ),
    json.dumps(
        {
            "id": "joke",
            "category": "no_call",
            "prompt": "Tell me a joke.",
            "tools": "@weather",
            "expected": [],
        }
    ),
]


def results() -> tuple[Suite, list[TargetSummary]]:
    suite = parse_suite(LINES, "weather <b>suite</b>")
    right = ScriptedProvider(
        [Step.calls(ToolCall("get_weather", {"city": "Paris"})), Step.text("Knock knock.")]
    )
    wrong = ScriptedProvider(
        [
            Step.calls(ToolCall("get_weather", {"city": "<img src=x onerror=alert(1)>"})),
            Step.text("</pre><script>alert('answer')</script>"),
        ]
    )
    # In a thread of its own: a browser test's thread already runs Playwright's event loop.
    with ThreadPoolExecutor(1) as worker:
        right_results = worker.submit(anyio.run, run_suite, right, suite).result()
        wrong_results = worker.submit(anyio.run, run_suite, wrong, suite).result()
    return suite, [
        TargetSummary("small <i>model</i>", tuple(right_results)),
        TargetSummary("other", tuple(wrong_results)),
    ]
