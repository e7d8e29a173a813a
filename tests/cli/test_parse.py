"""`farmhand parse`: raw model output on stdin, the parsed message as JSON on stdout."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support import derived_templates
from tests.support.corpus import CORPUS
from typer.testing import CliRunner

from farmhand.cli.main import app

runner = CliRunner()


def parse(stdin: str, *args: str) -> dict[str, object]:
    result = runner.invoke(app, ["parse", *args], input=stdin)
    assert result.exit_code == 0, result.output
    parsed: dict[str, object] = json.loads(result.stdout)
    return parsed


def test_default_family_reads_hermes_calls_and_reasoning() -> None:
    call = '{"name": "ls", "arguments": {"path": "."}}'
    out = parse(f"<think>plan</think>Checking.<tool_call>{call}</tool_call>")
    assert out == {
        "family": "hermes_2_pro",
        "content": "Checking.",
        "reasoning_content": "plan",
        "tool_calls": [{"name": "ls", "arguments": {"path": "."}}],
    }


def test_family_by_corpus_slug_and_alias() -> None:
    assert parse("hello", "--family", "hermes_2_pro")["family"] == "hermes_2_pro"
    assert parse("hello", "--family", "qwen")["family"] == "hermes_2_pro"


def test_family_detected_from_a_template_file() -> None:
    template = CORPUS / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
    assert parse("hi", "--template", str(template))["family"] == "hermes_2_pro"


def test_family_guessed_from_a_model_name() -> None:
    assert parse("hi", "--model", "Qwen2.5-7B-Instruct")["family"] == "hermes_2_pro"


def test_stream_prints_events_then_the_message() -> None:
    result = runner.invoke(
        app,
        ["parse", "--stream"],
        input='Hi <tool_call>{"name": "ls", "arguments": {}}</tool_call>',
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.strip().splitlines()
    first = json.loads(lines[0])
    assert first == {"content": "Hi "}
    assert {"tool_call": {"name": "ls", "arguments": {}}} in [
        json.loads(line) for line in lines if line.startswith('{"')
    ]


def test_tools_restrict_what_bare_json_can_call() -> None:
    text = '{"name": "rm", "arguments": {}}'
    assert parse(text, "--tools", "ls")["tool_calls"] == []
    assert parse(text, "--tools", "ls")["content"] == text
    assert parse(text, "--tools", "rm")["tool_calls"] == [{"name": "rm", "arguments": {}}]


def test_a_malformed_call_shows_its_error() -> None:
    out = parse('<tool_call>{"name": "ls", "arguments": {"path": </tool_call>')
    calls = out["tool_calls"]
    assert isinstance(calls, list) and "could not read the tool call" in calls[0]["error"]


def test_bad_options_are_one_line_errors(tmp_path: Path) -> None:
    result = runner.invoke(app, ["parse", "--family", "nope"], input="x")
    assert result.exit_code == 1
    assert "unknown tool parser 'nope'" in result.output
    result = runner.invoke(app, ["parse", "--family", "qwen", "--model", "x"], input="x")
    assert result.exit_code == 1 and "only one of" in result.output
    result = runner.invoke(app, ["parse", "--template", str(tmp_path / "none.jinja")], input="x")
    assert result.exit_code == 1 and "cannot read" in result.output


def _run(stdin: str, *args: str) -> tuple[dict[str, object], str]:
    result = runner.invoke(app, ["parse", *args], input=stdin)
    assert result.exit_code == 0, result.output
    parsed: dict[str, object] = json.loads(result.stdout)
    return parsed, result.stderr


def test_a_template_no_family_knows_is_derived_and_explained(tmp_path: Path) -> None:
    template = tmp_path / "future-model.jinja"
    template.write_text(derived_templates.PER_ARG)
    call = '<calls><invoke tool="get_time"><arg key="city">Paris</arg></invoke></calls>'
    out, explanation = _run(f"<|thought|>hmm<|/thought|>On it. {call}", "--template", str(template))
    assert out == {
        "family": "auto",
        "content": "On it. ",
        "reasoning_content": "hmm",
        "tool_calls": [{"name": "get_time", "arguments": {"city": "Paris"}}],
    }
    assert "No family module knows this template" in explanation
    assert "shape: a tag with the name, then a tag per argument" in explanation
    assert 'each argument: <arg key="KEY">VALUE</arg>' in explanation
    assert "reasoning opens with: <|thought|>" in explanation


def test_family_auto_derives_even_for_a_known_template() -> None:
    template = CORPUS / "templates" / "Qwen-Qwen2.5-7B-Instruct.jinja"
    call = '<tool_call>\n{"name": "ls", "arguments": {"path": "."}}\n</tool_call>'
    out, explanation = _run(call, "--family", "auto", "--template", str(template))
    assert out["family"] == "auto"
    assert out["tool_calls"] == [{"name": "ls", "arguments": {"path": "."}}]
    assert "The hermes_2_pro module knows this template" in explanation
    assert "each call opens with: <tool_call>" in explanation


def test_a_template_of_another_shape_says_why_it_is_not_derived() -> None:
    template = CORPUS / "templates" / "autoparser" / "openai-gpt-oss-120b.jinja"
    _, explanation = _run("hi", "--family", "auto", "--template", str(template))
    assert "no parser can be derived from it" in explanation or "derives instead" in explanation
    assert "Harmony" in explanation


def test_family_auto_without_a_template_reads_with_the_generic_parser() -> None:
    out, explanation = _run('{"tool_call": {"name": "ls", "arguments": {}}}', "--family", "auto")
    assert out["family"] == "auto"
    assert out["tool_calls"] == [{"name": "ls", "arguments": {}}]
    assert "give one with --template FILE" in explanation


def test_only_auto_combines_with_a_template(tmp_path: Path) -> None:
    template = tmp_path / "t.jinja"
    template.write_text(derived_templates.TAG_JSON)
    result = runner.invoke(app, ["parse", "--family", "qwen", "--template", str(template)])
    assert result.exit_code == 1 and "only one of" in result.output
    template.write_bytes(b"\xff\xfe not text")
    result = runner.invoke(app, ["parse", "--template", str(template)], input="x")
    assert result.exit_code == 1 and "not UTF-8 text" in result.output


def test_parse_says_which_shape_the_calls_came_in() -> None:
    call = '{"name": "get_weather", "arguments": {"city": "Riga"}}'
    out = parse(f"<tools>\n{call}\n</tools>", "--tools", "get_weather")
    assert out["shape"] == "<tools> tag"
    assert out["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Riga"}}]
    unknown = parse(f"Sure:\n```json\n{call}\n```", "--family", "any", "--tools", "get_weather")
    assert (unknown["family"], unknown["shape"]) == ("known_shapes", "code fence")
    assert "shape" not in parse(f"<tool_call>{call}</tool_call>")  # the family's own tag
    pythonic = parse('[get_weather(city="Riga")]', "--family", "any", "--tools", "get_weather")
    assert pythonic["shape"] == "pythonic list"
    assert pythonic["tool_calls"] == [{"name": "get_weather", "arguments": {"city": "Riga"}}]
