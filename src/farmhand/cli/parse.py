"""`farmhand parse`: read a model's raw output on stdin, print what farmhand makes of it.

This is how a user finds out why a call was not detected: paste the model's text, see the
content, reasoning and calls each family's parser reads out of it.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from farmhand.cli.common import console, err_console, fail, user_errors
from farmhand.errors import ConfigError, ModelError
from farmhand.messages import ReasoningDelta, StreamEvent, TextDelta, ToolCallDelta, ToolCallEvent
from farmhand.parsing.base import ParsedMessage, ParserOptions
from farmhand.parsing.derived.analysis import analyze
from farmhand.parsing.derived.explain import explain
from farmhand.parsing.hermes import SHAPES, TOOL_CALL_TAG
from farmhand.parsing.registry import FAMILIES, detect_family, parser_for, resolve_family


def parse_command(
    family: Annotated[
        str | None,
        typer.Option(help=f"Parser family: {', '.join(FAMILIES)}."),
    ] = None,
    template: Annotated[
        Path | None,
        typer.Option(
            help="A chat template (.jinja) to detect the family from; when no family knows"
            " it, the parser derived from it (explained on stderr). Also with --family auto.",
            dir_okay=False,
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(help="A model name or .gguf file to detect the family from."),
    ] = None,
    stream: Annotated[
        bool, typer.Option("--stream", help="Print each event as it is parsed (JSON lines).")
    ] = False,
    tools: Annotated[
        str | None,
        typer.Option(help="Comma-separated tool names; bare JSON must name one of them."),
    ] = None,
    reasoning_format: Annotated[
        str, typer.Option(help="none | auto | deepseek: how reasoning is split out.")
    ] = "auto",
    thinking_forced_open: Annotated[
        bool, typer.Option(help="The prompt already opened the reasoning block.")
    ] = False,
    no_tool_calls: Annotated[
        bool, typer.Option("--no-tool-calls", help="Read everything as text (no calls).")
    ] = False,
) -> None:
    """Parse a model's raw output (stdin) and print content, reasoning and tool calls as JSON."""
    auto_from_file = family is not None and _is_auto(family) and model is None
    if sum(x is not None for x in (family, template, model)) > 1 and not auto_from_file:
        fail("give only one of --family, --template and --model (or --family auto --template)")
    if reasoning_format not in ("none", "auto", "deepseek"):
        fail(f"--reasoning-format must be none, auto or deepseek, not {reasoning_format!r}")
    with user_errors():
        chat_template = _read(template) if template else _gguf_template(model) if model else None
        slug = _family(family, chat_template, model)
        if slug in ("auto", "generic") and (template or slug == "auto"):
            _explain(chat_template)
        options = ParserOptions(
            parse_tool_calls=not no_tool_calls,
            reasoning_format=_reasoning(reasoning_format),
            thinking_forced_open=thinking_forced_open,
        )
        names = [t.strip() for t in tools.split(",") if t.strip()] if tools else None
        parser = parser_for(chat_template, None, names, family=slug, options=options)
        events: list[StreamEvent] = []
        if stream:
            for chunk in iter(lambda: sys.stdin.read(64), ""):
                for event in parser.feed(chunk):
                    _print_event(event)
                    events.append(event)
            for event in parser.finish():
                _print_event(event)
                events.append(event)
        else:
            events = parser.feed(sys.stdin.read()) + parser.finish()
    result = {"family": slug, **ParsedMessage.from_events(events).to_json()}
    # Families that read several shapes say which the calls came in: known_shapes always,
    # hermes when it is not its own tag (a wrapper the model should not have used).
    shape = getattr(parser, "shape", "")
    if shape and result["tool_calls"] and (slug == "known_shapes" or shape != OWN_TAG):
        result["shape"] = shape
    console.print_json(json.dumps(result, ensure_ascii=False))


OWN_TAG = SHAPES[TOOL_CALL_TAG]


def _reasoning(value: str) -> Literal["none", "auto", "deepseek"]:
    return "none" if value == "none" else "deepseek" if value == "deepseek" else "auto"


def _is_auto(family: str) -> bool:
    try:
        return resolve_family(family) == "auto"
    except ConfigError:
        return False


def _read(template: Path) -> str:
    try:
        return template.read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"cannot read {template}: {exc.strerror}")
    except UnicodeDecodeError:
        fail(f"cannot read {template}: it is not UTF-8 text (a chat template is jinja text)")


def _family(family: str | None, chat_template: str | None, model: str | None) -> str:
    if family:
        return resolve_family(family)
    if chat_template is not None or model:
        return detect_family(chat_template, model)
    return "hermes_2_pro"


def _explain(chat_template: str | None) -> None:
    """On stderr: what the parser derived from the template reads (stdout stays JSON)."""
    if chat_template is None:
        err_console.print(
            "--family auto derives its parser from a chat template: give one with --template"
            " FILE; without it the generic parser reads the output",
            highlight=False,
            soft_wrap=True,
        )
        return
    derived = analyze(chat_template)
    known = detect_family(chat_template)
    if known not in ("auto", "generic"):
        heading = f"The {known} module knows this template; --family auto derives instead:"
    elif derived.in_scope:
        heading = "No family module knows this template; the parser derived from it reads:"
    else:
        heading = "No family module knows this template, and no parser can be derived from it:"
    err_console.print(heading, highlight=False, soft_wrap=True)
    for line in explain(derived):
        err_console.print(f"  {line}", highlight=False, soft_wrap=True, markup=False)


def _gguf_template(model: str) -> str | None:
    """The chat template inside a local GGUF (a path, or a catalog model already pulled)."""
    from farmhand.models import assemble
    from farmhand.models.catalog import lookup

    path = Path(model)
    if path.suffix != ".gguf":
        try:
            path = assemble.cached_path(lookup(model))
        except ModelError:
            return None  # not a catalog model: its name is the only hint
    if path.suffix != ".gguf" or not path.is_file():
        return None
    try:
        from llama_cpp import Llama
        from llama_cpp._utils import suppress_stdout_stderr

        with suppress_stdout_stderr(disable=False):  # llama.cpp logs even when not verbose
            llama = Llama(str(path), vocab_only=True, verbose=False)
    except (ImportError, ValueError, RuntimeError) as exc:
        raise ModelError(f"cannot read the chat template of {path}: {exc}") from exc
    template = llama.metadata.get("tokenizer.chat_template")
    return template if isinstance(template, str) else None


def _print_event(event: StreamEvent) -> None:
    record: dict[str, Any]
    if isinstance(event, TextDelta):
        record = {"content": event.text}
    elif isinstance(event, ReasoningDelta):
        record = {"reasoning_content": event.text}
    elif isinstance(event, ToolCallDelta):
        record = {
            "tool_call_delta": {
                "index": event.index,
                "name": event.name,
                "arguments": event.arguments,
            }
        }
    elif isinstance(event, ToolCallEvent):
        call = event.call
        record = {
            "tool_call": {
                "name": call.name,
                "arguments": call.arguments,
                **({"error": call.parse_error} if call.parse_error else {}),
            }
        }
    else:
        return
    typer.echo(json.dumps(record, ensure_ascii=False))
