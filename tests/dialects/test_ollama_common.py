"""The pieces of Ollama's bodies that are not plain types: keep_alive durations, think
levels, format, and the Go-template subset of a generate's `template`."""

from __future__ import annotations

import math

import pytest

from farmhand.dialects.ollama.common import keep_alive_seconds, response_format, think_flag
from farmhand.dialects.ollama.template import render_go_template
from farmhand.errors import RequestError

CHATML = (
    "{{- if .System }}<|im_start|>system\n{{ .System }}<|im_end|>\n{{ end -}}\n"
    "<|im_start|>user\n{{ .Prompt }}<|im_end|>\n<|im_start|>assistant\n{{ .Response }}"
)


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        (None, None),
        (0, 0.0),
        (300, 300.0),
        (2.5, 2.5),
        ("0", 0.0),
        ("45", 45.0),
        ("5m", 300.0),
        ("1h30m", 5400.0),
        ("1.5h", 5400.0),
        ("300ms", 0.3),
        (-1, math.inf),
        ("-1m", math.inf),
    ],
)
def test_keep_alive_durations(value: object, seconds: float | None) -> None:
    assert keep_alive_seconds(value) == seconds


@pytest.mark.parametrize("value", ["soon", "5 minutes", "m", "", True, [1], {"m": 5}, "5m3"])
def test_keep_alive_mistakes(value: object) -> None:
    with pytest.raises(RequestError, match='keep_alive must be seconds or a duration like "5m"'):
        keep_alive_seconds(value)


def test_think_levels_mean_on() -> None:
    assert [think_flag(v) for v in (None, True, False, "low", "high")] == [
        None,
        True,
        False,
        True,
        True,
    ]
    with pytest.raises(RequestError, match="think must be"):
        think_flag("max")


def test_formats() -> None:
    assert response_format("") is None and response_format(None) is None
    assert response_format("json") == "json"
    schema = {"type": "array", "items": {"type": "string"}}
    assert response_format(schema) == schema
    with pytest.raises(RequestError, match="format is not a valid JSON Schema"):
        response_format({"type": "object", "required": "name"})
    with pytest.raises(RequestError, match='format must be "json" or a JSON Schema object'):
        response_format(["json"])


def test_templates_render_the_ollama_subset() -> None:
    with_system = render_go_template(CHATML, {"System": "Be brief.", "Prompt": "Hi"})
    assert with_system == (
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
        "<|im_start|>assistant\n"
    )
    without = render_go_template(CHATML, {"Prompt": "Hi"})
    assert without == "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    branch = "{{ if .First }}first{{ else }}later{{ end }}: {{ .Prompt }}"
    assert render_go_template(branch, {"First": False, "Prompt": "p"}) == "later: p"
    assert render_go_template("no actions", {}) == "no actions"


@pytest.mark.parametrize(
    ("template", "says"),
    [
        ("{{ range .Messages }}{{ .Content }}{{ end }}", "{{ range .Messages }}"),
        ("{{ .Tools }}", "{{ .Tools }}"),
        ("{{ if .System }}open", "an {{ if }} without its {{ end }}"),
        ("{{ end }}", "{{ end }} without an {{ if }}"),
        ('{{ printf "%s" .Prompt }}', "printf"),
    ],
)
def test_templates_refuse_what_they_cannot_render(template: str, says: str) -> None:
    with pytest.raises(RequestError) as raised:
        render_go_template(template, {"Prompt": "x"})
    assert says in str(raised.value)
    assert "farmhand renders {{ .System }}, {{ .Prompt }}" in str(raised.value)
    assert raised.value.param == "template"
