"""farmhand's exceptions: one tree, rooted in FarmhandError.

    FarmhandError                 anything farmhand raises on purpose; str() is for the user
    ├── ConfigError               a config file or option is wrong (names file, line, key path)
    │   └── UnknownModelError     a request names a model the config does not have
    ├── ModelError                a model cannot be found, assembled, verified or loaded
    ├── ProviderError             a model backend failed or refused a request
    │   └── DeploymentsDownError  every deployment of a model is failing (503, Retry-After)
    ├── ToolError                 a tool could not be listed or called
    │   ├── UnknownToolError      the model named a tool that does not exist
    │   └── ToolServerError       an MCP server failed to start or died (names its command)
    ├── LoopError                 the tool loop could not finish (round limit, cancelled)
    ├── RequestError              a request (HTTP or MCP) is wrong in a way its client can fix
    │   ├── AuthError             no API key, or a wrong one (401)
    │   ├── TooLargeError         a body past the server's size limit (413)
    │   ├── BusyError             a model's queue is full, or no memory to load it (429/503)
    │   ├── ProjectNotFoundError  a project that does not exist (404)
    │   └── ProjectExistsError    a project name already taken (409)
    ├── AnswerError               an answer to a question no one asked, or that does not fit
    ├── PolicyError               a request asked for what the operator has not allowed
                                  (a program, a folder, a host); names the switch to change
    └── LlamaServerError          a llama-server could not be reached, refused a request, or
                                  could not be started or stopped (the llama_* MCP tools)

Every message says what was wrong and what to do about it.
"""

from __future__ import annotations


class FarmhandError(Exception):
    """Base of every error farmhand raises on purpose."""


class ConfigError(FarmhandError):
    """A configuration file, key or option is invalid."""


class ModelError(FarmhandError):
    """A model cannot be found, assembled, verified or loaded."""


class ProviderError(FarmhandError):
    """A model backend failed or refused the request. `brief` says so in a few fixed words,
    with nothing the backend wrote (what a client is told about a backend it chose)."""

    def __init__(self, message: str, *, brief: str = "") -> None:
        super().__init__(message)
        self.brief = brief or "the model's backend failed; the server's log has the details"


class DeploymentsDownError(ProviderError):
    """Every deployment of a model is failing or cooling down; `retry_after` is the seconds
    until the next is tried again."""

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message, brief="every backend serving the model is down; retry later")
        self.retry_after = retry_after


class ToolError(FarmhandError):
    """A tool could not be listed or called."""


class UnknownToolError(ToolError):
    """The model asked for a tool that no toolset offers."""


class ToolServerError(ToolError):
    """An MCP server could not be started, or stopped answering."""


class LoopError(FarmhandError):
    """The tool loop could not reach an answer."""


class PolicyError(FarmhandError):
    """Something from outside the operator's config (an HTTP or MCP request, a project
    written through the API) asked to start, read or reach what the operator did not allow."""


class LlamaServerError(FarmhandError):
    """A llama-server was unreachable, answered with an error, or could not be started or
    stopped."""


class RequestError(FarmhandError):
    """A request is wrong in a way the client can fix; `param` names the field."""

    status = 400

    def __init__(
        self, message: str, *, param: str | None = None, code: str | None = None, status: int = 0
    ) -> None:
        super().__init__(message)
        self.param = param
        self.code = code
        if status:
            self.status = status


class AuthError(RequestError):
    """The request carries no API key, or one the server does not know."""

    status = 401


class TooLargeError(RequestError):
    """The request's body is larger than the server accepts."""

    status = 413


class BusyError(RequestError):
    """The model cannot take the request now (its queue is full: 429; no memory to load it
    while others are in use: 503); `retry_after` is the seconds to wait before trying again."""

    status = 429

    def __init__(self, message: str, *, retry_after: int, status: int = 0) -> None:
        super().__init__(message, code="model_busy", status=status)
        self.retry_after = retry_after


class ShuttingDownError(BusyError):
    """The server is stopping (SIGTERM) and takes no new request: 503 with Retry-After, so a
    load balancer or client tries another replica."""

    def __init__(self, message: str, *, retry_after: int = 1) -> None:
        super().__init__(message, retry_after=retry_after, status=503)
        self.code = "shutting_down"


class ProjectNotFoundError(RequestError):
    status = 404


class ProjectExistsError(RequestError):
    status = 409


class AnswerError(FarmhandError):
    """An answer names no open question (`unknown`), or a question another replica holds
    (`elsewhere`), or does not fit the question's form."""

    def __init__(self, message: str, *, unknown: bool = False, elsewhere: bool = False) -> None:
        super().__init__(message)
        self.unknown = unknown
        self.elsewhere = elsewhere


class UnknownModelError(ConfigError):
    """The request names a model the config does not have (the message lists those it has)."""
