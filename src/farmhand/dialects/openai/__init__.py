"""OpenAI's Chat Completions: the request (`chat.py`), the answer and its chunks
(`completion.py`), the error object (`errors.py`) and its part of the OpenAPI document
(`openapi.py`)."""
