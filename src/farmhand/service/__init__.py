"""farmhand's service core: the live state (providers, MCP pool, tasks, projects) and the
operations every face needs (chat, tool search, models, projects). No HTTP and no MCP
protocol here: `server/` and `mcpserver/` translate their requests into these calls."""
