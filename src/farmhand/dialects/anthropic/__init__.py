"""Anthropic's Messages API: the request (`request.py`, over `content.py` and `tools.py`), the
answer and its named SSE events (`response.py`), the error object (`errors.py`) and its
part of the OpenAPI document (`openapi.py`)."""
