"""OpenAI's Responses API: the request (`request.py`, its tools in `tools.py`, `custom.py`,
`mcp.py`), the input items (`items.py`, `references.py`, `questions.py`), the response and
its SSE events (`render.py`) and its part of the OpenAPI document (`openapi.py`). Its errors
are OpenAI's (`dialects/openai/errors.py`)."""
