"""llama.cpp's llama-server: a client for its HTTP API (`client`), its answers in one shape
(`reshape`), where to find it and how long to wait (`settings`), and starting and stopping a
local one (`process`). The llama_* MCP tools (`mcpserver.llama_tools`) are built on these."""
