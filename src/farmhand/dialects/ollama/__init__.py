"""Ollama's API under /api: chat (`chat.py`), generate (`generate.py`, with Go templates in
`template.py`), the model routes (`models.py`), what they share (`common.py`), the error
object (`errors.py`) and its part of the OpenAPI document (`openapi.py`)."""
