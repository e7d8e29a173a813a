"""Prompt tokens spent on tool definitions: every tool up front vs JIT discovery.

Claim: with JIT discovery (`jit_tools: true`) the model's prompt carries one small tool,
`mcp_discover`, instead of every tool of every server, and after a discovery only the few
tools it injected (at most `jit_max_tools`, 5 by default), so small context windows are
not spent on definitions the turn does not need.

Baseline: the eager prompt, with every tool of the test servers: server-everything (npm),
server-filesystem (npm, on a temporary folder), mcp-server-time and mcp-server-git (PyPI, on
this repository). Both are rendered with the embedded model's own chat template and counted
with its tokenizer; the count is the prompt with tools minus the same prompt without tools.

Printed: tools and tokens for eager, JIT before any discovery, and JIT after one discovery
injected `jit_max_tools` tools (the largest such prompt: the top tools by definition size),
and the ratios JIT/eager.

Run: .venv/bin/python bench/jit_prompt_tokens.py
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio

from farmhand.config.models import McpServerConfig
from farmhand.messages import Message
from farmhand.models.assemble import ensure_model
from farmhand.models.catalog import DEFAULT_MODEL
from farmhand.prompting.templates import render_chat_template
from farmhand.tools.definition import ToolDefinition
from farmhand.toolsets.mcp.client import MCPToolset
from farmhand.toolsets.mcp.discovery import DISCOVER_TOOL
from farmhand.toolsets.mcp.known_servers import filesystem_server, find_node_server
from farmhand.toolsets.wrappers import PrefixedToolset

REPO = Path(__file__).resolve().parents[1]
JIT_MAX_TOOLS = 5
QUESTION = [Message.user("What changed in the last commit of this repository?")]


def _servers(folder: Path) -> list[McpServerConfig]:
    venv_bin = Path(sys.executable).parent
    everything = find_node_server(
        "mcp-server-everything", "@modelcontextprotocol/server-everything"
    )
    return [
        McpServerConfig(name="everything", command=everything, args=["stdio"]),
        filesystem_server(folder),
        McpServerConfig(name="time", command=str(venv_bin / "mcp-server-time")),
        McpServerConfig(
            name="git", command=str(venv_bin / "mcp-server-git"), args=["--repository", str(REPO)]
        ),
    ]


async def _all_tools(servers: list[McpServerConfig]) -> list[ToolDefinition]:
    tools: list[ToolDefinition] = []
    async with AsyncExitStack() as stack:
        for server in servers:
            toolset = await stack.enter_async_context(MCPToolset.from_config(server))
            tools += await PrefixedToolset(toolset, server.name).list_tools()
    return tools


def _tokenizer() -> tuple[Any, str]:
    from llama_cpp import Llama
    from llama_cpp._utils import suppress_stdout_stderr

    with suppress_stdout_stderr(disable=False):
        llama = Llama(str(ensure_model(DEFAULT_MODEL)), vocab_only=True, verbose=False)
    return llama, str(llama.metadata["tokenizer.chat_template"])


def _definition_tokens(llama: Any, template: str, tools: list[ToolDefinition]) -> int:
    def count(offered: list[ToolDefinition]) -> int:
        prompt = render_chat_template(template, QUESTION, offered)
        return len(llama.tokenize(prompt.encode(), add_bos=False, special=True))

    return count(tools) - count([])


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    try:
        tools = anyio.run(_all_tools, _servers(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    llama, template = _tokenizer()
    eager = _definition_tokens(llama, template, tools)
    jit_start = _definition_tokens(llama, template, [DISCOVER_TOOL])
    biggest = sorted(tools, key=lambda t: len(str(t.to_openai())), reverse=True)[:JIT_MAX_TOOLS]
    jit_after = _definition_tokens(llama, template, [DISCOVER_TOOL, *biggest])
    print(f"{'prompt':34} {'tools':>5} {'tokens':>7} {'vs eager':>8}")
    print(f"{'eager (all 4 servers)':34} {len(tools):5d} {eager:7d} {1:8.2f}")
    print(f"{'JIT, before discovery':34} {1:5d} {jit_start:7d} {jit_start / eager:8.3f}")
    print(
        f"{'JIT, after one discovery (max 5)':34} {1 + len(biggest):5d} {jit_after:7d}"
        f" {jit_after / eager:8.3f}"
    )


if __name__ == "__main__":
    main()
