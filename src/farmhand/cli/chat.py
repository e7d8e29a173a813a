"""`farmhand chat`: one question, answered by a model that may use tools."""

from __future__ import annotations

import json
from contextlib import aclosing
from pathlib import Path
from typing import Annotated, Any

import anyio
import typer
from rich.markup import escape

from farmhand.cli.common import (
    ChatTemplateOption,
    ConfigOption,
    LogLevelOption,
    MaxTokensOption,
    ModelPathOption,
    SeedOption,
    TemperatureOption,
    console,
    err_console,
    project_config,
    quiet_logging,
    user_errors,
)
from farmhand.cli.service import chat_service, command_chat
from farmhand.config.models import FarmhandConfig
from farmhand.errors import ConfigError, LoopError, RequestError
from farmhand.messages import Message
from farmhand.providers.base import GenerationSettings
from farmhand.runtime.events import (
    LoopEvent,
    LoopFinished,
    TextChunk,
    ToolCallFinished,
    ToolCallStarted,
)
from farmhand.service.chat import ChatRequest, run_chat
from farmhand.service.state import ServiceState
from farmhand.tools.choice import ToolChoice
from farmhand.tools.loading import load_tools
from farmhand.toolsets.mcp.known_servers import filesystem_server

RESULT_PREVIEW = 160


def chat(
    prompt: Annotated[str, typer.Argument(help="What to ask.")],
    model: Annotated[
        str | None, typer.Option("--model", "-m", help="Model name from the config or catalog.")
    ] = None,
    tools: Annotated[
        Path | None,
        typer.Option(
            "--tools",
            help="A folder the model may read, through the filesystem MCP server.",
            file_okay=False,
        ),
    ] = None,
    model_path: ModelPathOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print one JSON object instead of streaming.")
    ] = False,
    temperature: TemperatureOption = None,
    max_tokens: MaxTokensOption = None,
    seed: SeedOption = None,
    tools_file: Annotated[
        Path | None,
        typer.Option(
            "--tools-file",
            help="Tool definitions (JSON/YAML; OpenAI, Anthropic, Bedrock or Google format)."
            " Calls to them are shown, not run.",
            dir_okay=False,
        ),
    ] = None,
    tool_choice: Annotated[
        str,
        typer.Option(help="auto | none | required | a tool name: whether the model must call."),
    ] = "auto",
    chat_template_file: ChatTemplateOption = None,
    log_level: LogLevelOption = "warning",
    config: ConfigOption = None,
) -> None:
    """Ask a question; the model may call tools, shown as they run."""
    with user_errors():
        quiet_logging(log_level)
        cfg = project_config(config)
        request = command_chat(
            cfg,
            model,
            model_path=model_path,
            chat_template_file=chat_template_file,
            messages=[Message.user(prompt)],
            settings=GenerationSettings(
                temperature=temperature,
                max_tokens=max_tokens,
                seed=seed,
                tool_choice=parse_tool_choice(tool_choice),
            ),
            client_tools=load_tools(str(tools_file)) if tools_file else [],
            folder_servers=[filesystem_server(tools)] if tools else [],
        )
        result = anyio.run(_run, cfg, request, as_json)
    if as_json:
        print(json.dumps(_json_report(result), ensure_ascii=False, indent=2))
    if result.stop_reason == "round_limit":
        err_console.print(
            f"[yellow]warning:[/] the model used all {result.rounds} tool rounds; it answered"
            " from the results so far (raise runtime.max_tool_rounds to allow more)"
        )


async def _run(config: FarmhandConfig, request: ChatRequest, quiet: bool) -> LoopFinished:
    async with chat_service(config, request) as state:
        return await answer(state, request, quiet=quiet)


async def answer(state: ServiceState, request: ChatRequest, *, quiet: bool) -> LoopFinished:
    """One chat on the service, its events drawn as they come (unless `quiet`)."""
    try:
        async with aclosing(run_chat(state, request)) as events:
            async for event in events:
                if isinstance(event, LoopFinished):
                    if not quiet:
                        console.print()
                        render_pending(event)
                    return event
                if not quiet:
                    render_event(event)
    except RequestError as exc:
        if exc.param != "tool_choice":
            raise
        hint = " (add --tools DIR)" if request.settings.tool_choice.mode == "required" else ""
        raise ConfigError(f"--tool-choice: {exc}{hint}") from None
    raise LoopError("the tool loop ended without an answer")


def render_event(event: LoopEvent) -> None:
    if isinstance(event, TextChunk):
        console.print(event.text, end="", markup=False, highlight=False)
    elif isinstance(event, ToolCallStarted):
        arguments = json.dumps(event.call.arguments, ensure_ascii=False)
        console.print(f"\n[cyan]→ {escape(event.call.name)}[/] [dim]{escape(arguments)}[/]")
    elif isinstance(event, ToolCallFinished):
        text = " ".join(event.result.content.split())
        short = text[:RESULT_PREVIEW] + ("…" if len(text) > RESULT_PREVIEW else "")
        style = "red" if event.result.is_error else "green"
        err = "error: " if event.result.is_error else ""
        console.print(f"[{style}]← {err}{escape(short)}[/]")


def parse_tool_choice(value: str) -> ToolChoice:
    """`auto`, `none`, `required`, or a tool's name (which the model must then call)."""
    return ToolChoice.parse(value, "--tool-choice")


def render_pending(result: LoopFinished) -> None:
    for call in result.pending_calls:
        arguments = json.dumps(call.arguments, ensure_ascii=False)
        console.print(
            f"[cyan]→ {escape(call.name)}[/] [dim]{escape(arguments)}[/]"
            " [yellow](not run: a tool you defined; run it and reply with its result)[/]"
        )


def _json_report(result: LoopFinished) -> dict[str, Any]:
    return {
        "answer": result.answer,
        "tool_calls": [
            {
                "name": record.call.name,
                "arguments": record.call.arguments,
                "result": record.result.content,
                "is_error": record.result.is_error,
            }
            for record in result.tool_calls
        ],
        "usage": {
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "total_tokens": result.usage.total_tokens,
        },
        "pending_calls": [
            {"id": call.id, "name": call.name, "arguments": call.arguments}
            for call in result.pending_calls
        ],
        "rounds": result.rounds,
        "stop_reason": result.stop_reason,
    }
