"""An OpenAI chat.completions request body -> a ChatRequest, or a RequestError saying what
to fix (400, with `param` naming the field, as OpenAI does).

The body is checked in one pass: `ChatCompletionBody`, a pydantic model whose fields are each
checked by their own validator in the order written (the messages by `chat_messages`).

Besides OpenAI's own fields it takes farmhand's extensions: `mcp_servers`, `tools_path`,
`max_tool_rounds`, `tool_timeout` (milliseconds, as in Ollama's MCP API), `jit_tools`,
`jit_max_tools`, `jit_connect_eager`, `include_tool_results`; and llama-server's
`chat_template_kwargs` (variables for the embedded model's chat template; a request's own
`chat_template` is refused: see `generation/template_kwargs.py`).

`response_format` (`text`, `json_object`, or `json_schema` with its `name`, `schema` and
`strict`) is the answer's shape, `GenerationSettings.response_format`, as the Responses
`text.format` and Ollama's `format` are.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, ValidationInfo

from farmhand.config.models import McpServerConfig
from farmhand.dialects.fields import (
    LARGEST_TIMEOUT_MS,
    Flag,
    Integer,
    Number,
    integer_value,
    json_schema,
)
from farmhand.dialects.openai.chat_messages import chat_messages
from farmhand.errors import ConfigError, RequestError
from farmhand.generation.settings import GenerationSettings, ResponseFormat
from farmhand.generation.template_kwargs import TEMPLATE_REFUSED, template_kwargs
from farmhand.messages import Message
from farmhand.service.chat import ChatRequest
from farmhand.service.mcp_servers import parse_mcp_servers
from farmhand.tools.choice import AUTO, ToolChoice
from farmhand.tools.definition import ToolDefinition
from farmhand.tools.formats import EXPECTED_TOOL_CHOICE, tool_choice_from_openai
from farmhand.tools.formats.detect import to_openai_tools
from farmhand.tools.preview import preview

SCHEMA_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")


@dataclass(frozen=True)
class OpenAIChat:
    """The parsed request: what to run, and how to answer."""

    chat: ChatRequest
    model: str
    stream: bool
    include_usage: bool
    include_tool_results: bool


def parse_chat(body: dict[str, Any]) -> OpenAIChat:
    """The request `body` checked in one pass (`ChatCompletionBody`), as a chat to run."""
    return ChatCompletionBody.model_validate(body).parsed()


def _model(value: object) -> str:
    if not isinstance(value, str) or not value:
        raise RequestError(
            "`model` is required: the name of a model from GET /v1/models", param="model"
        )
    return value


def _no_template(value: object) -> None:
    if value is not None:
        raise RequestError(TEMPLATE_REFUSED, param="chat_template")


def _one_choice(value: object) -> int | None:
    if integer_value(value, "n", minimum=1) not in (None, 1):
        raise RequestError("only n=1 is supported", param="n")
    return None


def _tools_path(value: object) -> Path | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise RequestError("tools_path must be a directory path", param="tools_path")
    return Path(value).expanduser()


def _stream_options(value: object) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise RequestError("stream_options must be an object", param="stream_options")
    return value


def _tools(value: object) -> list[ToolDefinition]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise RequestError("tools must be a list of function tools", param="tools")
    try:
        tools = to_openai_tools(value)
    except ConfigError as exc:
        raise RequestError(str(exc), param="tools") from None
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise RequestError(f"tool name {tool.name!r} is used twice", param="tools")
        seen.add(tool.name)
    return tools


def _tool_choice(value: object, info: ValidationInfo) -> ToolChoice:
    if value is None:
        return AUTO
    tools: list[ToolDefinition] = info.data.get("tools", [])
    try:
        choice = tool_choice_from_openai(value)
    except ConfigError:
        raise RequestError(
            f"tool_choice {json.dumps(value)} is not valid; use {EXPECTED_TOOL_CHOICE}",
            param="tool_choice",
        ) from None
    if choice.mode == "required" and not tools:
        raise RequestError(
            'tool_choice "required" needs `tools`; add the tools the model must choose from',
            param="tool_choice",
        )
    return choice


def _stop(value: object) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list) and all(isinstance(v, str) for v in value) and len(value) <= 4:
        return tuple(value)
    raise RequestError("stop must be a string or a list of up to 4 strings", param="stop")


def _response_format(value: object) -> ResponseFormat | None:
    """`response_format` as the answer's shape: None (free text), "json" (any JSON object)
    or the JSON Schema of `json_schema.schema` (left out: any JSON object, as OpenAI reads
    it). `strict` asks for what farmhand always does: the answer is constrained to it."""
    kind = value.get("type") if isinstance(value, dict) else None
    if value is None or kind == "text":
        return None
    if kind == "json_object":
        return "json"
    if kind != "json_schema" or not isinstance(value, dict):
        raise RequestError(
            f'response_format {preview(value)} is not a format; use {{"type": "text"}},'
            ' {"type": "json_object"} or {"type": "json_schema", "json_schema": {"name":'
            ' "...", "schema": {...}}}',
            param="response_format",
        )
    form = value.get("json_schema")
    if not isinstance(form, dict):
        raise RequestError(
            'response_format json_schema needs "json_schema": {"name": "...", "schema": {...}}',
            param="response_format.json_schema",
        )
    name = form.get("name")
    if not isinstance(name, str) or not SCHEMA_NAME.fullmatch(name):
        raise RequestError(
            "response_format.json_schema.name must be a name of up to 64 letters, digits,"
            f" underscores and dashes, got {preview(name)}",
            param="response_format.json_schema.name",
        )
    if not isinstance(form.get("strict", False), bool | None):
        raise RequestError(
            "response_format.json_schema.strict must be true or false",
            param="response_format.json_schema.strict",
        )
    schema = form.get("schema")
    if schema is None:
        return "json"
    if not isinstance(schema, dict):
        raise RequestError(
            "response_format.json_schema.schema must be the JSON Schema of the answer, as an"
            " object",
            param="response_format.json_schema.schema",
        )
    return json_schema(schema, "response_format.json_schema.schema")


class ChatCompletionBody(BaseModel):
    """The body of `POST /v1/chat/completions`, each field checked by its own validator in
    the order written here (a RequestError naming the field, which pydantic passes on as it
    is); fields it does not know are ignored, as OpenAI's are by older servers."""

    model_config = ConfigDict(extra="ignore", frozen=True, arbitrary_types_allowed=True)

    model: Annotated[str, PlainValidator(_model)] = Field(None, validate_default=True)
    tools: Annotated[Sequence[ToolDefinition], PlainValidator(_tools)] = ()
    temperature: Annotated[float | None, Number(minimum=0, maximum=2)] = None
    max_completion_tokens: Annotated[int | None, Integer(minimum=1)] = None
    max_tokens: Annotated[int | None, Integer(minimum=1)] = None
    seed: Annotated[int | None, Integer()] = None
    stop: Annotated[tuple[str, ...], PlainValidator(_stop)] = ()
    tool_choice: Annotated[ToolChoice | None, PlainValidator(_tool_choice)] = None
    parallel_tool_calls: Annotated[bool | None, Flag] = None
    stream: Annotated[bool | None, Flag] = None
    top_p: Annotated[float | None, Number(minimum=0, maximum=1)] = None
    response_format: Annotated[ResponseFormat | None, PlainValidator(_response_format)] = None
    chat_template: Annotated[None, PlainValidator(_no_template)] = None
    chat_template_kwargs: Annotated[
        dict[str, Any] | None, PlainValidator(lambda v: template_kwargs(v))
    ] = None
    n: Annotated[int | None, PlainValidator(_one_choice)] = None
    tools_path: Annotated[Path | None, PlainValidator(_tools_path)] = None
    tool_timeout: Annotated[float | None, Number(minimum=1, maximum=LARGEST_TIMEOUT_MS)] = None
    """Milliseconds, as in Ollama's MCP API."""
    stream_options: Annotated[dict[str, Any] | None, PlainValidator(_stream_options)] = None
    messages: Annotated[list[Message], PlainValidator(chat_messages)] = Field(
        None, validate_default=True
    )
    mcp_servers: Annotated[
        Sequence[McpServerConfig | str], PlainValidator(lambda v: parse_mcp_servers(v))
    ] = ()
    max_tool_rounds: Annotated[int | None, Integer(minimum=1)] = None
    jit_tools: Annotated[bool | None, Flag] = None
    jit_max_tools: Annotated[int | None, Integer(minimum=1)] = None
    jit_connect_eager: Annotated[bool | None, Flag] = None
    include_tool_results: Annotated[bool | None, Flag] = None

    def parsed(self) -> OpenAIChat:
        """The chat this body asks for, and how to answer it."""
        settings = GenerationSettings(
            temperature=self.temperature,
            max_tokens=self.max_completion_tokens or self.max_tokens,
            seed=self.seed,
            stop=self.stop,
            tool_choice=self.tool_choice or AUTO,
            parallel_tool_calls=self.parallel_tool_calls is not False,
            stream=self.stream is True,
            top_p=self.top_p,
            response_format=self.response_format,
            template_kwargs=self.chat_template_kwargs,
        )
        timeout_ms = self.tool_timeout
        chat = ChatRequest(
            model=self.model,
            messages=self.messages,
            settings=settings,
            client_tools=self.tools,
            mcp_servers=self.mcp_servers,
            tools_path=self.tools_path,
            max_tool_rounds=self.max_tool_rounds,
            tool_timeout=timeout_ms / 1000 if timeout_ms is not None else None,
            jit_tools=self.jit_tools,
            jit_max_tools=self.jit_max_tools,
            jit_connect_eager=self.jit_connect_eager,
        )
        return OpenAIChat(
            chat=chat,
            model=self.model,
            stream=bool(self.stream),
            include_usage=bool((self.stream_options or {}).get("include_usage", False)),
            include_tool_results=bool(self.include_tool_results),
        )
