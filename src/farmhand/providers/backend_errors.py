"""What a remote backend's failures say to the user, worded once for every HTTP provider
(OpenAI-compatible servers, Anthropic): an HTTP error status with the server's own
message, a transport failure with the setting to change, and a tool call whose arguments
cannot be read (`backend_call`).

Each failure is a ProviderError whose `brief` is a status and a fixed reason, with nothing
the backend wrote: what the client of a project that chose its own backend is told (the
full message goes to the server's log)."""

from __future__ import annotations

import json
import time
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING

from farmhand.errors import ProviderError
from farmhand.messages import ToolCall, new_call_id

if TYPE_CHECKING:
    from farmhand.providers.backend_transport import FailureKind, Timeouts, TransportError

SHOWN = 200
"""Characters of a bad line or body quoted in an error message."""


def clip(text: str, limit: int = SHOWN) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "..."


def error_detail(body: bytes) -> str:
    """The server's own error message from the body, whatever shape it uses."""
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
    except ValueError:
        return clip(text) or "(empty body)"
    if isinstance(data, dict):
        error = data.get("error")
        if isinstance(error, dict) and error.get("message"):
            return clip(str(error["message"]))
        for value in (error, data.get("detail"), data.get("message")):
            if isinstance(value, str) and value:
                return clip(value)
            if value:  # FastAPI validation errors: a list of dicts
                return clip(json.dumps(value, ensure_ascii=False))
    return clip(json.dumps(data, ensure_ascii=False))


TRANSPORT_BRIEF: dict[FailureKind, str] = {
    "connect": "the model's backend could not be reached",
    "connect_timeout": "the model's backend could not be reached",
    "invalid_url": "the model's backend could not be reached",
    "read_timeout": "the model's backend did not answer in time",
    "closed": "the connection to the model's backend broke off",
    "broke_off": "the connection to the model's backend broke off",
    "other": "the request to the model's backend failed",
}


DOWN_KINDS: frozenset[FailureKind] = frozenset(
    {"connect", "connect_timeout", "read_timeout", "closed", "broke_off"}
)
"""Transport failures that say the backend itself is down or stuck (not the request)."""


class BackendFailure(ProviderError):
    """A ProviderError that says how the backend failed, for a deployment pool to judge:
    `status` an HTTP error status, `kind` a transport failure, `retry_after` the seconds
    the backend asked to be left alone (its Retry-After)."""

    def __init__(
        self,
        message: str,
        *,
        brief: str,
        status: int | None = None,
        kind: FailureKind | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, brief=brief)
        self.status = status
        self.kind = kind
        self.retry_after = retry_after

    @property
    def backend_down(self) -> bool:
        """The backend, not the request, failed: it could not be reached, broke off, was
        overloaded (429) or failed itself (5xx); another backend may well answer."""
        if self.status is not None:
            return self.status == 429 or self.status >= 500
        return self.kind in DOWN_KINDS


def status_error(message: str, status: int, retry_after: float | None = None) -> BackendFailure:
    brief = f"the model's backend answered HTTP {status}"
    return BackendFailure(message, brief=brief, status=status, retry_after=retry_after)


def transport_error(message: str, kind: FailureKind) -> BackendFailure:
    return BackendFailure(message, brief=TRANSPORT_BRIEF[kind], kind=kind)


def retry_after_seconds(header: str, now: float | None = None) -> float | None:
    """A Retry-After header's wait in seconds (it is a number of seconds or an HTTP
    date); None when there is none or it cannot be read."""
    header = header.strip()
    if not header:
        return None
    try:
        return max(0.0, float(header))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(header).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def status_message(
    status: int,
    reason: str,
    body: bytes,
    *,
    url: str,
    base_url: str,
    model: str,
    keyed: bool,
    location: str = "",
) -> str:
    """An HTTP error answer (or a redirect, to `location`); `keyed`: an API key was sent."""
    if 300 <= status < 400:
        to = f" to {clip(location)}" if location else ""
        return (
            f"{url} answered HTTP {status} {reason}, a redirect{to}; farmhand follows no"
            f" redirects: set base_url (now {base_url!r}) to the address the backend names"
        )
    message = f"{url} answered HTTP {status} {reason}: {error_detail(body)}"
    if status in (401, 403):
        sent = "an api key was sent but refused" if keyed else "no api key was sent"
        message += f" ({sent}; check the provider's api_key)"
    elif status == 404:
        message += f" (check base_url {base_url!r} and model {model!r})"
    return message


def transport_message(
    exc: TransportError, *, url: str, base_url: str, timeouts: Timeouts, provider: str
) -> str:
    """A request that failed before or while its answer arrived."""
    detail = exc.detail
    if exc.kind == "connect_timeout":
        return f"cannot reach {url}: no connection within {timeouts.connect}s (connect timeout)"
    if exc.kind == "read_timeout":
        return (
            f"{url} sent nothing for {timeouts.read}s (read timeout): the model is stuck or "
            f"slower than that; raise the timeout of provider {provider!r} if it is just slow"
        )
    if exc.kind == "connect":
        return f"cannot reach {url}: is the server running? ({detail})"
    if exc.kind == "invalid_url":
        example = "http://localhost:8080/v1"
        return f"invalid base_url {base_url!r} ({detail}); expected e.g. {example}"
    if exc.kind == "closed":
        return f"{url} closed the connection without answering ({detail}); is it restarting?"
    if exc.kind == "broke_off":
        return f"the connection to {url} broke off during the response ({detail})"
    return f"request to {url} failed: {detail}"


_KINDS = {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}


def backend_call(name: str, arguments: object, call_id: str = "") -> ToolCall:
    """A call as a backend sent it: `arguments` as JSON text (OpenAI's, Anthropic's streamed
    `partial_json`) or as the value itself (Anthropic's `input`). What cannot be read is a
    call with `parse_error` set, which the loop sends back to the model."""
    call_id = call_id or new_call_id()
    text = arguments if isinstance(arguments, str) else json.dumps(arguments, ensure_ascii=False)
    if not name:
        error = f"the tool call has no name (arguments: {clip(text)!r})"
        return ToolCall(name="", arguments={}, id=call_id, parse_error=error)
    if isinstance(arguments, str):
        if not arguments.strip():  # llama-server and others send "" for a call without any
            return ToolCall(name=name, arguments={}, id=call_id)
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError as exc:
            problem = f"are not valid JSON ({exc.msg} at character {exc.pos})"
            error = f"the arguments of {name} {problem}: {clip(text, 500)!r}"
            return ToolCall(name=name, arguments={}, id=call_id, parse_error=error)
    if isinstance(arguments, dict):
        return ToolCall(name=name, arguments=arguments, id=call_id)
    problem = f"must be a JSON object, not {_KINDS.get(type(arguments), 'null')}"
    error = f"the arguments of {name} {problem}: {clip(text, 500)!r}"
    return ToolCall(name=name, arguments={}, id=call_id, parse_error=error)
