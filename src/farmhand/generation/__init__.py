"""The neutral values a request sets for one model turn: `GenerationSettings` (sampling, tool
choice, answer format) and the checked `chat_template_kwargs`. Dialects build them from their
wire shapes and providers read them, so neither needs the other."""
