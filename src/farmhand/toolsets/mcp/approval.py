"""Approvals: the one wrapper that holds a tool call until someone says it may run.

`ApprovalGate` wraps a toolset with an `ApprovalRule`. A call the rule covers waits for its
approver: the person at the terminal (`farmhand chat`, `run`), the API client through a
paused chat (`runtime.questions.QuestionRelay`: the question is an `InputRequested` among
the loop's events), the playground's own `approved` switch, or no one (refused, saying
why). A gate without an approver defers instead: the call raises `ApprovalRequired`, the
tool loop holds it and ends with it in `LoopFinished.held_calls`, and the caller runs it
(or answers it with a denial) once its client decides (the Responses API's `mcp` tools,
as pydantic-ai's deferred tool calls do).

Two configurations make a rule: a server's `require_approval` (`ApprovalRule.from_policy`)
and the Responses API's per-request `require_approval` (tool names, read-only filters).
"destructive" follows MCP's tool hints with the spec's defaults: a tool may destroy or
overwrite unless it says it is read-only (readOnlyHint) or not destructive
(destructiveHint: false), so a tool without annotations asks too.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from mcp import types

from farmhand.config.models import ApprovalPolicy, McpServerConfig
from farmhand.tools.definition import SEPARATOR, ToolDefinition
from farmhand.toolsets.base import ToolOutput, Toolset
from farmhand.toolsets.mcp.elicitation import Answer, Asker, Question

MAX_SHOWN_ARGUMENTS = 2000


@dataclass(frozen=True)
class ApprovalRule:
    """Which calls wait for approval: tools named in `never` (or read-only ones with
    `never_read_only`, or ones that say they destroy nothing with `never_harmless`) run at
    once, those in `always` (or read-only ones with `always_read_only`) wait, the rest
    follow `default`. `policy` names the server's `require_approval` the rule came from,
    for the texts that say why a call asks."""

    default: bool = True
    always: frozenset[str] = frozenset()
    never: frozenset[str] = frozenset()
    always_read_only: bool = False
    never_read_only: bool = False
    never_harmless: bool = False
    policy: ApprovalPolicy | None = None

    @classmethod
    def from_policy(cls, policy: ApprovalPolicy) -> ApprovalRule:
        """The rule of a server's `require_approval`."""
        if policy == "destructive":
            return cls(never_read_only=True, never_harmless=True, policy=policy)
        return cls(default=policy == "always", policy=policy)

    def needed(self, tool: ToolDefinition | None) -> bool:
        """Whether a call of `tool` (None: a tool its server did not list) must wait."""
        if tool is None:
            return self.default
        if tool.name in self.never or (self.never_read_only and tool.read_only):
            return False
        if self.never_harmless and tool.annotations.get("destructiveHint") is False:
            return False
        if tool.name in self.always or (self.always_read_only and tool.read_only):
            return True
        return self.default

    @property
    def asks_ever(self) -> bool:
        return self.default or bool(self.always) or self.always_read_only


ALWAYS = ApprovalRule()
"""Every call waits (the Responses API's `mcp` tool without `require_approval`)."""


class ApprovalRequired(Exception):
    """Raised by a gate without an approver: the call is held for its caller to decide (a
    signal to the tool loop, like StopIteration, not a failure)."""

    def __init__(self, server: str, tool: str, arguments: dict[str, Any]) -> None:
        super().__init__(f"{server}{SEPARATOR}{tool} waits for approval")
        self.server = server
        self.tool = tool
        self.arguments = arguments


class ApprovalGate:
    """A toolset whose calls under `rule` wait for `approver` (None: held for the caller,
    `ApprovalRequired`). A call the approver does not accept is not run, and the model is
    told why (`not_approved`). `server` names the tools' server in questions and texts."""

    def __init__(
        self, inner: Toolset, server: str, rule: ApprovalRule, approver: Asker | None
    ) -> None:
        self.inner = inner
        self.server = server
        self.rule = rule
        self.approver = approver
        self._tools: dict[str, ToolDefinition] | None = None

    async def list_tools(self) -> list[ToolDefinition]:
        tools = await self.inner.list_tools()
        self._tools = {t.name: t for t in tools}
        return tools

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> ToolOutput:
        if self.rule.asks_ever:
            if self._tools is None:
                await self.list_tools()
            tool = self._tools.get(name) if self._tools is not None else None
            if self.rule.needed(tool):
                if self.approver is None:
                    raise ApprovalRequired(self.server, name, arguments)
                answer = await self.approver(self.question(name, arguments))
                if answer.action != "accept":
                    return not_approved(self.server, name, answer, self.rule.policy or "always")
        return await self.inner.call_tool(name, arguments)

    def question(self, tool: str, arguments: dict[str, Any]) -> Question:
        return approval_question(self.server, tool, arguments, self.rule.policy or "always")


def gated(inner: Toolset, server: McpServerConfig, approver: Asker) -> Toolset:
    """`inner`, the tools of `server`, behind its `require_approval` (itself for "never")."""
    if server.require_approval == "never":
        return inner
    rule = ApprovalRule.from_policy(server.require_approval)
    return ApprovalGate(inner, server.name, rule, approver)


def needs_approval(policy: ApprovalPolicy, tool: types.Tool | None) -> bool:
    """Whether a call of the MCP tool `tool` (None: not listed) must be approved."""
    rule = ApprovalRule.from_policy(policy)
    if tool is None:
        return rule.needed(None)
    hints = tool.annotations
    dumped = hints.model_dump(by_alias=True, exclude_none=True) if hints else {}
    return rule.needed(ToolDefinition(tool.name, "", {}, annotations=dumped))


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
