"""Asking the user before a tool runs, as a server's `require_approval` says.

"destructive" follows MCP's tool hints with the spec's defaults: a tool may destroy or
overwrite unless it says it is read-only (readOnlyHint) or not destructive
(destructiveHint: false), so a tool without annotations asks too.
"""

from __future__ import annotations

import json
from typing import Any

from mcp import types

from farmhand.config.models import ApprovalPolicy
from farmhand.tools.definition import SEPARATOR
from farmhand.toolsets.base import ToolOutput
from farmhand.toolsets.mcp.elicitation import Answer, Question

MAX_SHOWN_ARGUMENTS = 2000


def needs_approval(policy: ApprovalPolicy, tool: types.Tool | None) -> bool:
    """Whether a call of `tool` (None: a tool the server did not list) must be approved."""
    if policy == "never":
        return False
    if policy == "always" or tool is None:
        return True
    hints = tool.annotations
    if hints is None:
        return True
    return not hints.read_only_hint and hints.destructive_hint is not False


def approval_question(
    server: str, tool: str, arguments: dict[str, Any], policy: ApprovalPolicy
) -> Question:
    shown = json.dumps(arguments, ensure_ascii=False)
    if len(shown) > MAX_SHOWN_ARGUMENTS:
        shown = shown[:MAX_SHOWN_ARGUMENTS] + "…"
    why = "may change or delete things" if policy == "destructive" else "asks before every tool"
    return Question(
        server,
        f"Run {server}:{tool} with {shown}? (server {server!r} {why}: require_approval: {policy})",
        "approval",
        tool=tool,
        arguments=dict(arguments),
    )


def not_approved(server: str, tool: str, answer: Answer, policy: ApprovalPolicy) -> ToolOutput:
    """The tool result the model gets for a call the user did not approve."""
    name = f"{server}{SEPARATOR}{tool}"
    if answer.refused:
        text = (
            f"{name} was not run: it needs the user's approval (server {server!r},"
            f" require_approval: {policy}), and {answer.reason}."
        )
    elif answer.action == "cancel":
        text = f"{name} was not run: the user dismissed the request to approve it."
    else:
        text = f"{name} was not run: the user declined it. Do not call it again unless asked."
    if answer.reason and not answer.refused:
        text += f" ({answer.reason})"
    return ToolOutput(text, is_error=True)
