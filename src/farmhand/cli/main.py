"""The `farmhand` command."""

from __future__ import annotations

import typer

from farmhand.cli import models as models_commands
from farmhand.cli.chat import chat
from farmhand.cli.config import config_app
from farmhand.cli.eval import eval_command
from farmhand.cli.mcp import mcp_app
from farmhand.cli.parse import parse_command
from farmhand.cli.rag import rag_app
from farmhand.cli.run import run
from farmhand.cli.serve import serve
from farmhand.cli.tools import tools_app

app = typer.Typer(
    name="farmhand",
    help="A local-first runtime that lets language models use tools.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.command()(chat)
app.command("parse")(parse_command)
app.command("eval")(eval_command)
app.command("run")(run)
app.command("serve")(serve)
app.add_typer(tools_app, name="tools", help="List, search and call MCP tools (no model).")
app.add_typer(config_app, name="config", help="Show or check the configuration.")
app.add_typer(
    mcp_app,
    name="mcp",
    help="farmhand as an MCP server (projects, chat, tools); OAuth login to MCP servers.",
)
app.add_typer(rag_app, name="rag", help="Index documents and search them (RAG).")
models_commands.register(app)


def main() -> None:
    app()
