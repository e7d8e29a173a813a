"""farmhand as an MCP server: its API as MCP tools (`farmhand_tools`), served over
streamable HTTP at /mcp inside `farmhand serve` (`http`) or over stdio (`farmhand mcp serve`)."""
