"""OpenAI Responses over HTTP: `POST /v1/responses` (SSE streaming and not),
`GET` / `DELETE /v1/responses/{id}` and `GET /v1/responses/{id}/input_items` for stored
responses. The wire shapes are `dialects.responses.request` / `.items` (request)
and `dialects.responses.render` (response); the chat is the service's
(`service.mcp_chat`, which runs the request's `mcp` tools), the store
`service.responses_store`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncGenerator
from contextlib import aclosing

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from farmhand.dialects.responses.items import Conversation, chat_request, read_conversation
from farmhand.dialects.responses.references import resolve_references
from farmhand.dialects.responses.render import ResponseBuilder
from farmhand.dialects.responses.request import ResponsesRequest, parse_responses, with_item_ids
from farmhand.errors import AnswerError, FarmhandError, RequestError
from farmhand.server.errors import api_error, error_response
from farmhand.server.json_body import json_object
from farmhand.server.json_response import JSONResponse
from farmhand.server.route_state import service_state
from farmhand.server.streaming import EventStream, SSEEvent, StreamItem
from farmhand.service.chat import Asker
from farmhand.service.mcp_chat import McpChatEvent, may_ask, run_mcp_chat
from farmhand.service.parked import ChatEvent, RunningChat
from farmhand.service.responses_store import StoredResponse
from farmhand.service.state import ServiceState

MAX_LISTED_ITEMS = 100


def routes() -> list[BaseRoute]:
    return [
        Route("/v1/responses", create_response, methods=["POST"]),
        Route("/v1/responses/{response_id}", get_response, methods=["GET"]),
        Route("/v1/responses/{response_id}", delete_response, methods=["DELETE"]),
        Route("/v1/responses/{response_id}/input_items", input_items, methods=["GET"]),
    ]


class _Turn:
    """One response being made: the parsed request, the conversation it continues, and
    the chat's events: a new chat's, or those of the paused chat the request answers.
    Chats run in the service's runner (`service.parked`), so one can pause on a question
    past the end of this response."""

    def __init__(self, state: ServiceState, parsed: ResponsesRequest) -> None:
        self.state = state
        self.parsed = parsed
        previous = _stored(state, parsed.previous_response_id, "previous_response_id")
        history = previous.conversation if previous is not None else []
        parsed.input_items = with_item_ids(
            resolve_references(
                parsed.input_items, state.response_store(), state.config.server.limits
            )
        )
        self.conversation = read_conversation(parsed, history)
        self.request = chat_request(parsed, self.conversation)
        self.input_items = [*history, *parsed.input_items]
        self.builder = ResponseBuilder(parsed)
        self.runner = state.chat_runner()
        self.resumed = _answer(state, self.conversation)
        self.kept = False

    def events(self) -> AsyncGenerator[ChatEvent, None]:
        if self.resumed is None and not may_ask(self.state, self.request, self.parsed.tools.mcp):
            # Nothing can ask a question: run in this request's task, without the runner's
            # task and channel (the common case, and a third of the CPU per request).
            return self._chat(None)
        running = self.resumed or self.runner.start(self._chat)
        return self.runner.read(running)

    def _chat(self, asker: Asker | None) -> AsyncGenerator[McpChatEvent, None]:
        conversation = self.conversation
        request = self.request
        if asker is not request.asker:
            request = dataclasses.replace(request, asker=asker)
        return run_mcp_chat(
            self.state,
            request,
            self.parsed.tools.mcp,
            conversation.approvals,
            conversation.listed,
        )

    async def keep(self) -> None:
        """Store the response (once), if the request asked to: before the client has all
        of it, so a `previous_response_id` sent to any replica as soon as it does finds it."""
        if self.parsed.store and not self.kept:
            self.kept = True
            store = self.state.response_store()
            response = self.builder.response()
            await store.put_without_blocking(response, self.input_items, self.parsed.model)


async def create_response(request: Request) -> Response:
    state = service_state(request)
    try:
        turn = _Turn(state, parse_responses(await json_object(request)))
    except FarmhandError as exc:
        return error_response(exc)
    if turn.parsed.stream:
        return _stream(turn)
    try:
        async with aclosing(turn.events()) as events:
            async for event in events:
                turn.builder.render(event)
    except FarmhandError as exc:
        return error_response(exc)
    await turn.keep()
    return JSONResponse(turn.builder.response())


def _stream(turn: _Turn) -> EventStream:
    builder = turn.builder

    async def items() -> AsyncGenerator[StreamItem, None]:
        opened = False
        async with aclosing(turn.events()) as events:
            async for event in events:
                if not opened:  # after the first event: errors before it are plain 4xx
                    for opening in builder.opening():
                        yield SSEEvent(opening["type"], opening)
                    opened = True
                rendered = builder.render(event)
                if builder.status != "in_progress":
                    await turn.keep()  # stored before the client can read the response's end
                for item in rendered:
                    yield SSEEvent(item["type"], item)
        await turn.keep()

    def error_items(exc: BaseException) -> list[StreamItem]:
        error = api_error(exc)
        body = {"code": error.code or error.type, "message": error.message, "param": error.param}
        return [SSEEvent(e["type"], e) for e in builder.failed(body)]

    return EventStream(items, form="sse", error_response=error_response, error_items=error_items)


def _answer(state: ServiceState, conversation: Conversation) -> RunningChat | None:
    """Hand the request's answer to the chat paused on its question, which goes on in
    this response; None when the request answers no question."""
    if not conversation.answers:
        return None
    if len(conversation.answers) > 1 or conversation.other_input:
        raise RequestError(
            "a request that answers a question carries that one answer alone (one"
            " mcp_approval_response or mcp_elicitation_response); the paused chat goes on"
            " with it, and other input can follow in the next request",
            param="input",
        )
    given = conversation.answers[0]
    if given.id in state.hand_questions:
        raise RequestError(
            f"question {given.id!r} is asked by a tool called by hand; answer it with"
            " POST /api/mcp/call/answer",
            param="input",
            code="not_found",
            status=404,
        )
    try:
        return state.chat_runner().answer(given.id, given.action, given.content, given.reason)
    except AnswerError as exc:  # the question stays open: the client may answer again
        status, code = (404, "not_found") if exc.unknown else (400, None)
        if exc.elsewhere:  # sent to the wrong replica: the question waits in another
            status, code = 409, "conflict"
        raise RequestError(str(exc), param="input", code=code, status=status) from None


def _stored(state: ServiceState, response_id: str | None, param: str) -> StoredResponse | None:
    if response_id is None:
        return None
    stored = state.response_store().get(response_id)
    if stored is None:
        raise _missing(response_id, param)
    return stored


async def get_response(request: Request) -> Response:
    try:
        stored = _stored(service_state(request), request.path_params["response_id"], "response_id")
    except FarmhandError as exc:
        return error_response(exc)
    assert stored is not None
    return JSONResponse(stored.response)


async def delete_response(request: Request) -> Response:
    response_id = request.path_params["response_id"]
    if not service_state(request).response_store().delete(response_id):
        return error_response(_missing(response_id, "response_id"))
    return JSONResponse({"id": response_id, "object": "response", "deleted": True})


async def input_items(request: Request) -> Response:
    try:
        stored = _stored(service_state(request), request.path_params["response_id"], "response_id")
        order, limit = _listing(request)
    except FarmhandError as exc:
        return error_response(exc)
    assert stored is not None
    items = stored.input_items if order == "asc" else stored.input_items[::-1]
    page = items[:limit]
    ids = [i.get("id") for i in page]
    return JSONResponse(
        {
            "object": "list",
            "data": page,
            "first_id": ids[0] if ids else None,
            "last_id": ids[-1] if ids else None,
            "has_more": len(items) > limit,
        }
    )


def _listing(request: Request) -> tuple[str, int]:
    order = request.query_params.get("order", "desc")
    if order not in ("asc", "desc"):
        raise RequestError('order must be "asc" or "desc"', param="order")
    raw = request.query_params.get("limit", "20")
    if not raw.isdigit() or not 1 <= int(raw) <= MAX_LISTED_ITEMS:
        raise RequestError(f"limit must be a number from 1 to {MAX_LISTED_ITEMS}", param="limit")
    return order, int(raw)


def _missing(response_id: str, param: str) -> RequestError:
    return RequestError(
        f"no stored response has id {response_id!r}; responses made with store=false are"
        " not kept, and deleted ones are gone",
        param=param,
        code="previous_response_not_found" if param == "previous_response_id" else "not_found",
        status=404,
    )
