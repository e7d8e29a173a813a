"""The wire formats of the APIs farmhand speaks (OpenAI Chat Completions and Responses,
Anthropic Messages, Ollama), as plain translation: a request body to a service
`ChatRequest`, the loop's events to the dialect's response objects. No HTTP here, so the
HTTP face (`server/`) and the MCP face (`mcpserver/`) share them."""
