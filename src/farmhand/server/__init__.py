"""farmhand serve: OpenAI- and Ollama-compatible HTTP APIs and an MCP endpoint."""
