"""Token counts for a request (`/v1/messages/count_tokens`): the model's own tokenizer over
the prompt its chat template renders from the request's messages and tools."""

from __future__ import annotations

from farmhand.providers.token_count import count_tokens as provider_count
from farmhand.service.chat import ChatRequest
from farmhand.service.state import ServiceState


async def count_tokens(state: ServiceState, request: ChatRequest) -> int:
    """The prompt tokens of `request`'s messages and own tools for its model (the tools of
    MCP servers are not connected for a count, so they are not counted). UnknownModelError
    for a model the config does not have, RequestError for a backend that cannot count."""
    model = state.model_config(request.model)
    provider = await state.provider(model)
    tools = [*model.tool_definitions(), *request.client_tools]
    return await provider_count(provider, request.messages, tools)
