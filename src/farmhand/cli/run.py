"""`farmhand run`: an interactive chat with a model that may use tools.

Reads one message per line from stdin (a terminal or a pipe), keeps the history across
turns, and answers `/tools` (the tools offered now) and `/exit`.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import Annotated

import anyio
import typer
from rich.markup import escape

from farmhand.cli.chat import answer
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
from farmhand.cli.tools import print_tools
from farmhand.config.models import FarmhandConfig
from farmhand.messages import Message
from farmhand.providers.base import GenerationSettings
from farmhand.runtime.tool_paths import servers_for_path
from farmhand.service.chat import ChatRequest, chat_tools
from farmhand.service.state import ServiceState

COMMANDS = "/tools lists the tools, /exit quits"


def run(
    model: Annotated[
        str | None, typer.Argument(help="Model name from the config or catalog.")
    ] = None,
    tools: Annotated[
        Path | None,
        typer.Option(
            "--tools",
            help="A path for the model's tools: servers from the definitions turn on for it"
            " (filesystem for any path, git where it has .git).",
        ),
    ] = None,
    model_path: ModelPathOption = None,
    jit: Annotated[
        bool | None,
        typer.Option(
            "--jit/--no-jit",
            help="Offer only mcp_discover first and inject the tools it finds"
            " (default: runtime.jit_tools).",
        ),
    ] = None,
    temperature: TemperatureOption = None,
    max_tokens: MaxTokensOption = None,
    seed: SeedOption = None,
    chat_template_file: ChatTemplateOption = None,
    log_level: LogLevelOption = "warning",
    config: ConfigOption = None,
) -> None:
    """Chat with a model, one message per line; /tools lists its tools, /exit quits."""
    with user_errors():
        quiet_logging(log_level)
        cfg = project_config(config)
        # Without --tools, the definitions marked `auto_enable: always` still start.
        found = servers_for_path(tools)
        for note in found.notes:
            err_console.print(f"[yellow]warning:[/] {escape(note)} (skipped)", soft_wrap=True)
        request = command_chat(
            cfg,
            model,
            model_path=model_path,
            chat_template_file=chat_template_file,
            messages=[],
            settings=GenerationSettings(temperature=temperature, max_tokens=max_tokens, seed=seed),
            own_servers=[s for s in found.servers if s.name not in found.folder_servers],
            folder_servers=[s for s in found.servers if s.name in found.folder_servers],
            jit_tools=jit,
        )
        anyio.run(_chat, cfg, request)


async def _chat(config: FarmhandConfig, request: ChatRequest) -> None:
    interactive = sys.stdin.isatty()
    if interactive:
        console.print(f"[dim]{COMMANDS}[/]")
    async with chat_service(config, request) as state:
        history: list[Message] = []
        while True:
            if interactive:
                console.print("[bold]› [/]", end="")
            line = await anyio.to_thread.run_sync(sys.stdin.readline)
            if not line:
                break  # end of input
            text = line.strip()
            if text in ("/exit", "/quit"):
                break
            if text == "/tools":
                await _show_tools(state, request)
            elif text.startswith("/"):
                console.print(f"unknown command {escape(text)!r}: {COMMANDS}")
            elif text:
                history = await _turn(state, request, history, text)


async def _turn(
    state: ServiceState, request: ChatRequest, history: list[Message], text: str
) -> list[Message]:
    """One user message through the tool loop; the history to continue from (it opens with
    the config's prompts, which the service adds to the first turn only)."""
    turn = dataclasses.replace(request, messages=[*history, Message.user(text)])
    finished = await answer(state, turn, quiet=False)
    if finished.stop_reason == "round_limit":
        err_console.print(
            f"[yellow]warning:[/] the model used all {finished.rounds} tool rounds"
            " (raise runtime.max_tool_rounds to allow more)"
        )
    return list(finished.messages)


async def _show_tools(state: ServiceState, request: ChatRequest) -> None:
    tools = await chat_tools(state, request)
    if not tools:
        console.print("no tools (start with --tools PATH, or add mcp.servers to the config)")
    print_tools(tools)
