"""Turn an MCP tool result into the text a model reads."""

from __future__ import annotations

import json

from mcp import types


def result_text(result: types.CallToolResult) -> str:
    parts: list[str] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            parts.append(item.text)
        elif isinstance(item, types.ImageContent | types.AudioContent):
            parts.append(f"[{item.type}: {item.mime_type}, {len(item.data) * 3 // 4} bytes]")
        elif isinstance(item, types.ResourceLink):
            parts.append(f"[resource: {item.uri}]")
        elif isinstance(item, types.EmbeddedResource):
            text = getattr(item.resource, "text", None)
            parts.append(text if isinstance(text, str) else f"[resource: {item.resource.uri}]")
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False))
    return "\n".join(parts)
